# PCRE2 (8-bit code units), which runs the tokenizer's pre-tokenizer expressions (pock_text), as
# the target PkgConfig::POCK_PCRE2. Natively through pkg-config (Debian's libpcre2-dev); when
# cross-compiling pkg-config would answer for the host, so the sysroot's static library is used
# (scripts/test-aarch64.sh unpacks libpcre2-dev:arm64 there), and the binaries that qemu runs
# need no arm64 shared library.
if(CMAKE_CROSSCOMPILING)
  find_path(POCK_PCRE2_INCLUDE_DIR pcre2.h REQUIRED)
  find_library(POCK_PCRE2_LIBRARY NAMES libpcre2-8.a REQUIRED)
  add_library(PkgConfig::POCK_PCRE2 STATIC IMPORTED)
  set_target_properties(PkgConfig::POCK_PCRE2 PROPERTIES IMPORTED_LOCATION "${POCK_PCRE2_LIBRARY}"
                                                         INTERFACE_INCLUDE_DIRECTORIES "${POCK_PCRE2_INCLUDE_DIR}")
else()
  find_package(PkgConfig REQUIRED)
  pkg_check_modules(POCK_PCRE2 REQUIRED IMPORTED_TARGET libpcre2-8)
endif()
