# Optional CPU libraries for kernels/cpu: XNNPACK (with pthreadpool and cpuinfo), OpenBLAS, and on
# x86 oneDNN (bf16 GEMMs on AVX512-BF16/AMX; without it bf16 GEMMs round in f32, correct but slow).
# Debian ships no CMake config for XNNPACK and pthreadpool and a broken one for cpuinfo, hence
# find_library and pkg-config. Results:
#   POCK_HAVE_XNNPACK, POCK_HAVE_OPENBLAS, POCK_HAVE_DNNL  ON when the library was found and is used
#   POCK_CPU_LIBRARIES                     absolute library paths (exportable as they are)
#   POCK_CPU_INCLUDE_DIRS, POCK_CPU_DEFINITIONS
# A library asked for but not found is a warning, not an error: the build goes on without it.
find_package(PkgConfig QUIET)
set(POCK_HAVE_XNNPACK OFF)
set(POCK_HAVE_OPENBLAS OFF)
set(POCK_HAVE_DNNL OFF)
set(POCK_CPU_LIBRARIES "")
set(POCK_CPU_INCLUDE_DIRS "")
set(POCK_CPU_DEFINITIONS "")

# A library found: linked, its headers on the path, POCK_HAVE_<name> ON and defined to 1.
macro(pock_use_cpu_library name title libraries include_dirs)
  set(POCK_HAVE_${name} ON)
  list(APPEND POCK_CPU_LIBRARIES ${libraries})
  list(APPEND POCK_CPU_INCLUDE_DIRS ${include_dirs})
  list(APPEND POCK_CPU_DEFINITIONS POCK_HAVE_${name}=1)
  message(STATUS "${title}: ${libraries}")
endmacro()

if(POCK_WITH_XNNPACK)
  find_path(POCK_XNNPACK_INCLUDE_DIR xnnpack.h)
  find_library(POCK_XNNPACK_LIBRARY NAMES XNNPACK xnnpack)
  find_library(POCK_PTHREADPOOL_LIBRARY NAMES pthreadpool)
  if(PKG_CONFIG_FOUND)
    pkg_check_modules(POCK_CPUINFO QUIET libcpuinfo)
  endif()
  if(POCK_XNNPACK_INCLUDE_DIR AND POCK_XNNPACK_LIBRARY AND POCK_PTHREADPOOL_LIBRARY AND POCK_CPUINFO_FOUND)
    set(POCK_HAVE_XNNPACK ON)
    list(APPEND POCK_CPU_LIBRARIES ${POCK_XNNPACK_LIBRARY} ${POCK_PTHREADPOOL_LIBRARY} ${POCK_CPUINFO_LINK_LIBRARIES})
    list(APPEND POCK_CPU_INCLUDE_DIRS ${POCK_XNNPACK_INCLUDE_DIR})
    list(APPEND POCK_CPU_DEFINITIONS POCK_HAVE_XNNPACK=1)
    message(STATUS "XNNPACK: ${POCK_XNNPACK_LIBRARY}")
  else()
    message(WARNING "POCK_WITH_XNNPACK is ON but XNNPACK, pthreadpool or cpuinfo is missing "
                    "(Debian: libxnnpack-dev libpthreadpool-dev libcpuinfo-dev); building without XNNPACK")
  endif()
endif()

if(POCK_WITH_OPENBLAS)
  # pkg-config names OpenBLAS's own cblas.h; find_package(BLAS) is the fallback elsewhere.
  if(PKG_CONFIG_FOUND)
    pkg_check_modules(POCK_OPENBLAS QUIET openblas)
  endif()
  if(POCK_OPENBLAS_FOUND)
    set(POCK_OPENBLAS_LIBRARIES ${POCK_OPENBLAS_LINK_LIBRARIES})
    set(POCK_OPENBLAS_INCLUDE_DIRS ${POCK_OPENBLAS_INCLUDE_DIRS})
  else()
    set(BLA_VENDOR OpenBLAS)
    find_package(BLAS QUIET)
    find_path(POCK_CBLAS_INCLUDE_DIR cblas.h PATH_SUFFIXES openblas)
    if(BLAS_FOUND AND POCK_CBLAS_INCLUDE_DIR)
      set(POCK_OPENBLAS_FOUND ON)
      set(POCK_OPENBLAS_LIBRARIES ${BLAS_LIBRARIES})
      set(POCK_OPENBLAS_INCLUDE_DIRS ${POCK_CBLAS_INCLUDE_DIR})
    endif()
  endif()
  if(POCK_OPENBLAS_FOUND)
    pock_use_cpu_library(OPENBLAS OpenBLAS "${POCK_OPENBLAS_LIBRARIES}" "${POCK_OPENBLAS_INCLUDE_DIRS}")
  else()
    message(WARNING "POCK_WITH_OPENBLAS is ON but OpenBLAS was not found (Debian: libopenblas-dev); "
                    "building without it")
  endif()
endif()

# oneDNN for x86 only: elsewhere (aarch64, the NEON cross build) bf16 GEMMs take the f32 rounding
# path. Its bf16 matmul is used with OpenBLAS's sgemm as the fallback, so it needs OpenBLAS.
if(POCK_WITH_DNNL AND POCK_HAVE_OPENBLAS AND CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64|i[3-6]86)$")
  find_path(POCK_DNNL_INCLUDE_DIR oneapi/dnnl/dnnl.hpp)
  find_library(POCK_DNNL_LIBRARY NAMES dnnl)
  if(POCK_DNNL_INCLUDE_DIR AND POCK_DNNL_LIBRARY)
    pock_use_cpu_library(DNNL oneDNN "${POCK_DNNL_LIBRARY}" "${POCK_DNNL_INCLUDE_DIR}")
  else()
    message(STATUS "oneDNN not found (Debian: libdnnl-dev): bf16 GEMMs round in f32 (correct, not faster)")
  endif()
endif()
