#!/usr/bin/env bash
# Cross-builds PockEngine for aarch64 with Debian's g++-aarch64-linux-gnu and runs the NEON-vs-ref
# op tests (and the cpu backend's portable loops) under qemu-aarch64, single-threaded: this build
# has no pthreadpool, and a multi-threaded pool hangs under qemu anyway. qemu emulates the CPU
# model QEMU_CPU (default max: every extension qemu has, BF16 and dot products included, so the
# BFMMLA and SDOT kernels run; e.g. QEMU_CPU=cortex-a72 runs the tests on a base ARMv8.0 CPU).
#   bash scripts/test-aarch64.sh     BUILD_DIR (default build-aarch64), JOBS (default: all cores)
# What it needs, fetched when missing (as root; otherwise it prints what to run):
#   - host packages g++-aarch64-linux-gnu and qemu-user (apt-get install), plus the host build
#     tools of scripts/install-deps.sh (cmake, ninja, flatc);
#   - arm64 builds of zlib and the header-only dependencies (flatbuffers, nlohmann-json, Eigen,
#     Catch2), unpacked into $BUILD_DIR/sysroot from `apt-get download` .debs with dpkg-deb -x:
#     installing arm64 packages with apt would remove their amd64 twins.
# Only what the tests need is built (pock_runtime, pock_compiler, the test programs below): XNNPACK,
# OpenBLAS, ONNX, CUDA, tools and examples are off.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
started=$SECONDS
BUILD_DIR=${BUILD_DIR:-build-aarch64}
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}
SYSROOT="$PWD/$BUILD_DIR/sysroot"
TOOL_PACKAGES=(g++-aarch64-linux-gnu qemu-user)
SYSROOT_PACKAGES=(zlib1g-dev:arm64 libflatbuffers-dev:arm64 catch2:arm64 nlohmann-json3-dev libeigen3-dev)
TESTS=(test_neon_backend test_cpu_backward test_block_quant test_neon_bf16_gemm)

require_root() {
  if [[ "$(id -u)" -ne 0 ]]; then
    echo "test-aarch64: $1 — run this script as root once, or do it by hand" >&2
    exit 1
  fi
}

echo "== cross toolchain"
if ! command -v aarch64-linux-gnu-g++ >/dev/null || ! command -v qemu-aarch64 >/dev/null; then
  require_root "missing ${TOOL_PACKAGES[*]}"
  apt-get update -q
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${TOOL_PACKAGES[@]}"
fi

echo "== arm64 sysroot"
if [[ ! -f "$SYSROOT/.complete" ]]; then
  require_root "the arm64 sysroot needs apt-get download of ${SYSROOT_PACKAGES[*]}"
  # apt lists arm64 packages only once the architecture is known to dpkg (nothing is installed).
  if ! dpkg --print-foreign-architectures | grep -qx arm64; then
    dpkg --add-architecture arm64
    apt-get update -q
  fi
  debs="$BUILD_DIR/debs"
  rm -rf "$debs" "$SYSROOT"
  mkdir -p "$debs" "$SYSROOT"
  (cd "$debs" && apt-get download -q -o APT::Sandbox::User=root "${SYSROOT_PACKAGES[@]}") ||
    { apt-get update -q && (cd "$debs" && apt-get download -q -o APT::Sandbox::User=root "${SYSROOT_PACKAGES[@]}"); }
  for deb in "$debs"/*.deb; do dpkg-deb -x "$deb" "$SYSROOT"; done
  touch "$SYSROOT/.complete"
fi

echo "== configure"
export CCACHE_BASEDIR="$PWD"
# -O2, not Release's -O3: Debian's aarch64 g++ 12.2 crashes (internal compiler error in
# vect_transform_reduction) vectorizing ref's softmax at -O3. zlib is linked statically: the
# arm64 libz.so is an absolute symlink that points outside the sysroot.
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake \
  -DPOCK_AARCH64_SYSROOT="$SYSROOT" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE="-O2 -DNDEBUG" \
  -DPOCK_USE_CCACHE=ON -DPOCK_WITH_XNNPACK=OFF -DPOCK_WITH_OPENBLAS=OFF -DPOCK_WITH_ONNX=OFF \
  -DPOCK_WITH_CUDA=OFF -DPOCK_BUILD_TOOLS=OFF -DPOCK_BUILD_EXAMPLES=OFF \
  -DZLIB_LIBRARY="$SYSROOT/usr/lib/aarch64-linux-gnu/libz.a" -DZLIB_INCLUDE_DIR="$SYSROOT/usr/include" >/dev/null

echo "== build ${TESTS[*]}"
cmake --build "$BUILD_DIR" -j "$JOBS" --target "${TESTS[@]}"

export QEMU_CPU=${QEMU_CPU:-max}
echo "== run under qemu-aarch64 -cpu $QEMU_CPU"
failed=0
for test in "${TESTS[@]}"; do
  echo "-- $test"
  qemu-aarch64 -L /usr/aarch64-linux-gnu "$BUILD_DIR/tests/$test" || failed=1
done
echo "== aarch64 tests $([[ $failed -eq 0 ]] && echo passed || echo FAILED) in $((SECONDS - started)) s"
exit $failed
