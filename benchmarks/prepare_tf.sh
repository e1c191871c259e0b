#!/usr/bin/env bash
# Prepares the TensorFlow side of the benchmarks (opt-in: run_all.sh --tf) and prints the Python
# to run it with (stdout; the log goes to stderr). Usage: benchmarks/prepare_tf.sh BUILD_DIR
#
# A venv of its own (BUILD_DIR/tf-venv), not the PyTorch one: TensorFlow and torch pin numpy and
# protobuf independently, and a TF process should not carry torch's libraries in its RSS.
# tensorflow-cpu (no CUDA wheels), tf-keras (Keras 2: TF 2.16+ ships Keras 3 as tf.keras, whose
# training loop is a different code path than the tf.function step we time), onnx to read the
# weights from the same ONNX file pockc compiles.
set -uo pipefail

BUILD_DIR=${1:?usage: prepare_tf.sh BUILD_DIR}
VENV="$BUILD_DIR/tf-venv"
TF_VERSION=2.21.0
TF_KERAS_VERSION=2.21.0

log() { echo "prepare_tf: $*" >&2; }

works() {  # PYTHON: imports what tf_side.py needs and differentiates one matmul in a tf.function
  "$1" - >&2 2>/dev/null <<'PYEOF'
import onnx, numpy, tensorflow as tf, tf_keras
x = tf.Variable(tf.random.normal((64, 64)))
@tf.function
def f():
    with tf.GradientTape() as t:
        y = tf.reduce_sum(x @ x)
    return t.gradient(y, x)
assert bool(tf.reduce_all(tf.math.is_finite(f())))
PYEOF
}

if [ ! -x "$VENV/bin/python" ]; then
  log "creating $VENV with $(${PYTHON_FOR_VENV:-python3} --version 2>&1)"
  "${PYTHON_FOR_VENV:-python3}" -m venv "$VENV" >&2 || exit 1
fi
if ! works "$VENV/bin/python"; then
  log "tensorflow-cpu==$TF_VERSION tf-keras==$TF_KERAS_VERSION onnx"
  "$VENV/bin/pip" install --disable-pip-version-check -q "tensorflow-cpu==$TF_VERSION" \
    "tf-keras==$TF_KERAS_VERSION" onnx >&2 || exit 1
  works "$VENV/bin/python" || { log "TensorFlow does not import or run here"; exit 1; }
fi
echo "$VENV/bin/python"
