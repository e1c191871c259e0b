#!/usr/bin/env bash
# Installs the Debian 12 packages that PockEngine builds, tests and demos with.
# The one list of build dependencies: the Makefile and .ci/run both call this script.
# A machine that already has every package does no apt work at all.
#   scripts/install-deps.sh           install what is missing (as root), or print the apt-get line
#   scripts/install-deps.sh --list    print the package list
set -euo pipefail

PACKAGES=(
  # toolchain
  cmake ninja-build g++ ccache pkg-config python3-pip
  # core: blob program section, checksums, recipes, tensor math, tests
  libflatbuffers-dev flatbuffers-compiler zlib1g-dev nlohmann-json3-dev libeigen3-dev catch2
  # fast CPU kernels
  libopenblas-dev libxnnpack-dev libpthreadpool-dev libcpuinfo-dev
  # ONNX import; pockc's .npz support; micro-benchmarks
  libonnx-dev libprotobuf-dev protobuf-compiler libzip-dev libbenchmark-dev
  # PyTorch parity tests (run under /usr/bin/python3) and the demo's data
  python3-torch python3-torchvision python3-onnx python3-numpy dataset-fashion-mnist
  # aarch64 cross build whose NEON tests run under emulation (scripts/test-aarch64.sh); the
  # Hexagon DSP program (clang-14 --target=hexagon, ld.lld), which qemu-user's qemu-hexagon runs
  g++-aarch64-linux-gnu qemu-user clang-14 lld-14
  # libFuzzer and the sanitizer runtimes for clang (scripts/fuzz.sh, the CI's fuzz and TSan stages)
  libclang-rt-14-dev
)

if [[ "${1:-}" == "--list" ]]; then
  printf '%s\n' "${PACKAGES[@]}"
  exit 0
fi

missing=()
for package in "${PACKAGES[@]}"; do
  # dpkg-query answers "install ok installed" only for a fully installed package.
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q '^install ok installed$'; then
    missing+=("$package")
  fi
done

if [[ ${#missing[@]} -eq 0 ]]; then
  exit 0
fi

install_line="apt-get update && apt-get install -y --no-install-recommends ${missing[*]}"
if [[ "$(id -u)" -ne 0 ]]; then
  echo "PockEngine needs these Debian packages, which are missing: ${missing[*]}" >&2
  echo "Install them as root, then run make again:" >&2
  echo "  sudo sh -c '$install_line'" >&2
  exit 1
fi

echo "installing missing packages: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"
