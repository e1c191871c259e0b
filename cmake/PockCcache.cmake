# Compiler cache for repeated builds (CI re-runs, fresh clones on the same machine). Off by
# default so that turning it on never forces a rebuild of an existing build tree; the Makefile and
# .ci/run turn it on. Set CCACHE_BASEDIR to the source root to share hits across checkouts.
option(POCK_USE_CCACHE "Compile through ccache when it is installed" OFF)
if(POCK_USE_CCACHE AND NOT CMAKE_CXX_COMPILER_LAUNCHER)
  find_program(POCK_CCACHE ccache)
  if(POCK_CCACHE)
    set(CMAKE_C_COMPILER_LAUNCHER ${POCK_CCACHE})
    set(CMAKE_CXX_COMPILER_LAUNCHER ${POCK_CCACHE})
    message(STATUS "ccache: ${POCK_CCACHE}")
  endif()
endif()
