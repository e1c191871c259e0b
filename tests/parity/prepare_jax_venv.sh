#!/usr/bin/env bash
# Makes BUILD_DIR/jax-venv with what the JAX parity family needs (tests/parity/run_parity_jax.py,
# docs/parity.md): JAX, Flax NNX, optax and jax2onnx are not Debian packages. Versions pinned so
# that a rerun exports the same file; the venv stays in the build tree.
# Usage: tests/parity/prepare_jax_venv.sh BUILD_DIR
set -euo pipefail
BUILD_DIR=${1:?usage: prepare_jax_venv.sh BUILD_DIR}
VENV="$BUILD_DIR/jax-venv"
PACKAGES=(jax==0.10.2 jaxlib==0.10.2 flax==0.12.8 optax==0.2.8 jax2onnx==0.17.1)

if [ ! -x "$VENV/bin/python" ]; then
  /usr/bin/python3 -m venv "$VENV"
fi
"$VENV/bin/pip" install --disable-pip-version-check -q "${PACKAGES[@]}"
"$VENV/bin/python" -c "import jax, flax, optax, jax2onnx, onnx; print('jax', jax.__version__, 'onnx', onnx.__version__)"
echo "$VENV"
