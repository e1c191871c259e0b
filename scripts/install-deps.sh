#!/usr/bin/env bash
# Installs the Debian 12 packages that PockEngine builds, tests and demos with, and the one PyPI
# package Debian 12 lacks (nanobind, for the Python package pockengine).
# The one list of build dependencies: the Makefile and .ci/run both call this script.
# A machine that already has every package does no apt or pip work at all.
#   scripts/install-deps.sh           install what is missing (as root), or print the lines to run
#   scripts/install-deps.sh --list    print the package lists (Debian's, then PyPI's)
set -euo pipefail

PACKAGES=(
  # toolchain
  cmake ninja-build g++ ccache pkg-config python3-pip
  # core: blob program section, checksums, recipes, tensor math, tests
  libflatbuffers-dev flatbuffers-compiler zlib1g-dev nlohmann-json3-dev libeigen3-dev catch2
  # fast CPU kernels
  libopenblas-dev libxnnpack-dev libpthreadpool-dev libcpuinfo-dev
  # bf16 GEMMs on x86 (recipe precision "bf16"; optional: without it they round in f32)
  libdnnl-dev
  # ONNX import; pockc's .npz support; micro-benchmarks
  libonnx-dev libprotobuf-dev protobuf-compiler libzip-dev libbenchmark-dev
  # PyTorch parity tests (run under /usr/bin/python3) and the demo's data
  python3-torch python3-torchvision python3-onnx python3-numpy dataset-fashion-mnist
  # venvs for the JAX and ONNX Runtime checks (scripts/prepare-test-venvs.sh)
  python3-venv
  # the Python package pockengine (python/): headers of /usr/bin/python3, which it is built for
  python3-dev
  # aarch64 cross build whose NEON tests run under emulation (scripts/test-aarch64.sh); the
  # Hexagon DSP program (clang-14 --target=hexagon, ld.lld), which qemu-user's qemu-hexagon runs
  g++-aarch64-linux-gnu qemu-user clang-14 lld-14
  # libFuzzer and the sanitizer runtimes for clang (scripts/fuzz.sh, the CI's fuzz and TSan stages)
  libclang-rt-14-dev
)

# From PyPI, for /usr/bin/python3 (the Python the build finds: it has numpy and torch), with
# --break-system-packages since Debian marks its Python externally managed; pip puts them in
# /usr/local/lib/python3*/dist-packages, apart from Debian's own. Without them the build skips
# the Python package and says why (python/CMakeLists.txt).
PIP_PACKAGES=(nanobind==2.15.0)
SYSTEM_PYTHON=/usr/bin/python3

if [[ "${1:-}" == "--list" ]]; then
  printf '%s\n' "${PACKAGES[@]}" "${PIP_PACKAGES[@]}"
  exit 0
fi

# pip's part, once the Debian packages (python3-pip among them) are in. Best effort: the Python
# package is optional, so a failed download warns and the build goes on without it.
install_pip_packages() {
  local missing_pip=() spec
  for spec in "${PIP_PACKAGES[@]}"; do
    # Installed at the pinned version: pip's metadata says so without importing anything.
    if ! "$SYSTEM_PYTHON" -c "import importlib.metadata as m, sys; sys.exit(m.version('${spec%%==*}') != '${spec#*==}')" \
        2>/dev/null; then
      missing_pip+=("$spec")
    fi
  done
  [[ ${#missing_pip[@]} -eq 0 ]] && return 0
  local pip_line="$SYSTEM_PYTHON -m pip install --break-system-packages --no-warn-script-location ${missing_pip[*]}"
  if [[ "$(id -u)" -ne 0 ]]; then
    echo "The Python package pockengine needs ${missing_pip[*]} from PyPI; the build skips it until then:" >&2
    echo "  sudo $pip_line" >&2
    return 0
  fi
  echo "installing from PyPI for $SYSTEM_PYTHON: ${missing_pip[*]}"
  # shellcheck disable=SC2086  # the line is a list of words
  if ! $pip_line -q --disable-pip-version-check --root-user-action=ignore; then
    echo "warning: could not install ${missing_pip[*]}: the build will skip the Python package" >&2
  fi
}

missing=()
for package in "${PACKAGES[@]}"; do
  # dpkg-query answers "install ok installed" only for a fully installed package.
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q '^install ok installed$'; then
    missing+=("$package")
  fi
done

if [[ ${#missing[@]} -eq 0 ]]; then
  [[ -x "$SYSTEM_PYTHON" ]] && install_pip_packages
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
install_pip_packages
