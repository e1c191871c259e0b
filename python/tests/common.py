"""What the pockengine tests share: the model, its recipes and data, and pockc.

The model is tests/frontend/tf2onnx/mobilenetv2_mini.onnx, the committed MobileNetV2-style
network (inverted residual blocks, BatchNorm, ReLU6, a 10-class head) of the same family as the
demo's EfficientNet-Lite0, which needs a download (examples/python/train_demo.py trains that
one). SPARSE_RECIPE is the demo's sparse scheme on it: every BatchNorm shift, the first half of
the head convolution's output channels and the classifier, with frozen BatchNorm statistics.
"""
import os
import sys
import tempfile
import unittest

try:
    import numpy as np
    import pockengine
except ImportError as e:  # run outside the build (no PYTHONPATH) or without Debian's python3-numpy
    print(f"SKIP: {e} (ctest sets PYTHONPATH to the built package; numpy is python3-numpy)")
    sys.exit(77)

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
MODEL = os.path.join(ROOT, "tests", "frontend", "tf2onnx", "mobilenetv2_mini.onnx")
BATCH = 4
IMAGE = 16  # NHWC input x: [BATCH, 16, 16, 3]; output "fc": [BATCH, 10]
CLASSES = 10
POCKC = os.environ.get("POCK_PYTHON_TEST_POCKC", "")

SPARSE_RECIPE = {
    "batch_size": BATCH,
    "loss": {"type": "cross_entropy", "logits": "fc", "labels": "label"},
    "optimizer": {"type": "adamw", "lr": 1e-2},
    "freeze_batchnorm_stats": True,
    "trainable": [{"bias_only": True},
                  {"match": "model/head_conv/*", "channel_ratio": 0.5},
                  {"match": "model/fc/*"}],
}


def batches(count, seed=0):
    """`count` batches of images with labels that depend on them (so that a model can learn them)."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((count * BATCH, IMAGE, IMAGE, 3)).astype(np.float32)
    label = (x[:, :8, :8, 0].mean(axis=(1, 2)) > 0).astype(np.int64) + 2 * (x[:, 8:, 8:, 1].mean(axis=(1, 2)) > 0)
    return x, label


def pockc_or_skip():
    if not POCKC or not os.path.exists(POCKC):
        print("SKIP: pockc is not built (POCK_PYTHON_TEST_POCKC unset)")
        sys.exit(77)
    return POCKC


class BlobTest(unittest.TestCase):
    """Compiles MODEL once per class, with RECIPE (None: inference only, at INPUT_SHAPES), into
    `blob` (also written to `blob_path`) in a temporary folder that `path(name)` points into."""

    RECIPE = SPARSE_RECIPE
    INPUT_SHAPES = None

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.blob_path = os.path.join(cls.tmp.name, "model.pock")
        cls.blob = pockengine.compile(MODEL, cls.RECIPE, input_shapes=cls.INPUT_SHAPES, output=cls.blob_path)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def path(self, name):
        return os.path.join(self.tmp.name, name)
