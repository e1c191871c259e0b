#!/usr/bin/env bash
# Makes the two venvs in the build tree that ctest's interop checks run under, for the Python
# packages that are not Debian packages (docs/parity.md):
#   BUILD_DIR/jax-venv  JAX, Flax NNX, optax, jax2onnx: parity/jax (tests/parity/run_parity_jax.py)
#   BUILD_DIR/ort-venv  onnxruntime, over /usr/bin/python3's own torch, onnx and numpy:
#                       parity/pockc's ONNX Runtime check (tests/parity/check_export_ort.py)
# Versions are pinned so that a rerun exports and checks the same files. A venv that already has
# its pinned versions costs no pip work. Best effort: without a download the two checks are
# skipped and say why. `make test` calls it.
#   scripts/prepare-test-venvs.sh [BUILD_DIR]    (default build)
set -euo pipefail
BUILD_DIR=${1:-build}
SYSTEM_PYTHON=/usr/bin/python3

JAX_PACKAGES=(jax==0.10.2 jaxlib==0.10.2 flax==0.12.8 optax==0.2.8 jax2onnx==0.17.1)
# Its own protobuf comes with it into the venv; Debian's onnx imports with that one too.
ORT_PACKAGES=(onnxruntime==1.32.0)

# Exit 0 when the venv's python has every package at its pinned version.
has_pins() {
  local python=$1/bin/python
  shift
  [[ -x "$python" ]] || return 1
  "$python" - "$@" <<'PY' 2>/dev/null
import importlib.metadata as m, sys
sys.exit(any(m.version(s.split("==")[0]) != s.split("==")[1] for s in sys.argv[1:]))
PY
}

# make_venv DIR SITE_FLAG PACKAGE...: SITE_FLAG "--system-site-packages" or "".
make_venv() {
  local venv=$1 site=$2
  shift 2
  has_pins "$venv" "$@" && return 0
  echo "making $venv: $*"
  # shellcheck disable=SC2086  # an empty flag is no word
  "$SYSTEM_PYTHON" -m venv $site "$venv" &&
    "$venv/bin/pip" install --disable-pip-version-check -q --timeout 30 --retries 1 "$@"
}

if ! "$SYSTEM_PYTHON" -c "import venv, ensurepip" 2>/dev/null; then
  echo "warning: $SYSTEM_PYTHON cannot make venvs (python3-venv): ctest skips parity/jax and the ONNX Runtime check" >&2
  exit 0
fi
mkdir -p "$BUILD_DIR"
make_venv "$BUILD_DIR/jax-venv" "" "${JAX_PACKAGES[@]}" ||
  echo "warning: could not make $BUILD_DIR/jax-venv: ctest skips parity/jax" >&2
make_venv "$BUILD_DIR/ort-venv" --system-site-packages "${ORT_PACKAGES[@]}" ||
  echo "warning: could not make $BUILD_DIR/ort-venv: ctest skips the ONNX Runtime check of parity/pockc" >&2
