#!/usr/bin/env bash
# Packs a CUDA build's pockc and GPU test binaries, with the shared libraries they need that a bare
# CUDA machine lacks, into one archive, so that benchmarks/cuda/check.sh can run on a GPU box that
# has the CUDA driver, cuBLAS, cuDNN and PyTorch but none of our Debian build dependencies:
#
#   bash benchmarks/cuda/bundle.sh [BUILD_DIR [OUT.tar.xz]]     # here, after building BUILD_DIR
#   POCK_PREBUILT=OUT.tar.xz bash benchmarks/cuda/check.sh       # there
#
# Left out, so that the GPU box's own copies load: the C library and the compiler's run-time
# libraries (the box's are newer), and the CUDA libraries (the driver, cuBLAS, cuDNN: the box's
# match its driver).
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD_DIR=${1:-build-cuda}
OUT=${2:-$BUILD_DIR/cuda-bundle.tar.xz}
STAGE=$(mktemp -d)
trap 'rm -rf "$STAGE"' EXIT
mkdir -p "$STAGE/bin" "$STAGE/lib"

bins=("$BUILD_DIR/pockc")
for f in tests/cuda/test_*.cpp; do bins+=("$BUILD_DIR/tests/$(basename "$f" .cpp)"); done
for b in "${bins[@]}"; do
  [ -x "$b" ] || { echo "bundle.sh: $b is not built" >&2; exit 1; }
  cp "$b" "$STAGE/bin/"
  strip --strip-debug "$STAGE/bin/$(basename "$b")"
done

system_lib='^(libc|libm|libdl|librt|libpthread|libgcc_s|libstdc\+\+|ld-linux-x86-64|linux-vdso|libcuda|libcudnn|libcublas|libcublasLt)\.so'
for b in "${bins[@]}"; do
  ldd "$b" | awk '$3 ~ /^\// {print $1, $3}'
done | sort -u | while read -r soname path; do
  [[ $soname =~ $system_lib ]] && continue
  cp -L "$path" "$STAGE/lib/$soname"
done

tar -C "$STAGE" -cJf "$OUT" bin lib
echo "bundle.sh: $OUT ($(du -h "$OUT" | cut -f1)): $(ls "$STAGE/bin" | tr '\n' ' ')+ $(ls "$STAGE/lib" | wc -l) libraries"
