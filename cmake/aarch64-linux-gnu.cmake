# Cross-compiling for aarch64 Linux with Debian's g++-aarch64-linux-gnu; tests run under
# qemu-aarch64 (CMAKE_CROSSCOMPILING_EMULATOR, which Catch2's test discovery uses too).
#
#   cmake -S . -B build-aarch64 -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake \
#         -DPOCK_AARCH64_SYSROOT=/path/to/sysroot ...
#
# POCK_AARCH64_SYSROOT is a folder with arm64 .debs unpacked into it (dpkg-deb -x): zlib and the
# header-only dependencies (flatbuffers, nlohmann-json, Eigen, Catch2). Installing arm64 packages
# with apt would remove their amd64 twins, hence the folder. scripts/test-aarch64.sh makes it.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_CROSSCOMPILING_EMULATOR "qemu-aarch64;-L;/usr/aarch64-linux-gnu")

# try_compile projects re-read this file: hand them the sysroot too.
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES POCK_AARCH64_SYSROOT)

# Libraries, headers and CMake packages from the cross toolchain and the sysroot only — never the
# host's x86 ones; programs (flatc) from the host.
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu ${POCK_AARCH64_SYSROOT})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# Headers used without a CMake target (flatbuffers) are found on this path.
if(POCK_AARCH64_SYSROOT)
  set(CMAKE_C_FLAGS_INIT "-isystem ${POCK_AARCH64_SYSROOT}/usr/include")
  set(CMAKE_CXX_FLAGS_INIT "-isystem ${POCK_AARCH64_SYSROOT}/usr/include")
endif()
