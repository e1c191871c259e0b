# The neon backend (kernels/neon): NEON intrinsics, folded into pock_runtime only when the build
# targets aarch64, where NEON is part of the base ISA (no flags, no run-time check). Defines
# POCK_HAVE_NEON for everything built in this tree (backend_list.cpp registers the table; the
# tests compare it with ref). Included after pock_runtime is defined.
set(POCK_HAVE_NEON OFF)
if(CMAKE_SYSTEM_PROCESSOR MATCHES "^(aarch64|arm64|ARM64)$")
  file(GLOB_RECURSE POCK_NEON_SOURCES CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/kernels/neon/*.cpp)
  target_sources(pock_runtime PRIVATE ${POCK_NEON_SOURCES})
  target_compile_definitions(pock_runtime PUBLIC $<BUILD_INTERFACE:POCK_HAVE_NEON=1>)
  set(POCK_HAVE_NEON ON)
  message(STATUS "neon backend: on (${CMAKE_SYSTEM_PROCESSOR})")
endif()
