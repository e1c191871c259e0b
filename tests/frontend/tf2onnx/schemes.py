"""What the TensorFlow fixture trains, shared by make_fixture.py (which runs TensorFlow) and
check_tf2onnx.py (which runs pockc): batch size, steps, and per scheme the optimizer (as a pock
recipe's "optimizer" object), which Keras layers train, and the recipe rules that select the same
parameters by their ONNX names. Plain Python, no imports: both sides load it.
"""
BATCH = 4
STEPS = 5
IMAGE = 16              # H = W of the NHWC input
CLASSES = 10
INFER_SAMPLES = 8       # two batches, so that pockc infer concatenates
BN_MOMENTUM = 0.99      # Keras's default (the weight of the old running value)
BN_EPSILON = 1e-3       # Keras's default

# Layers of the sparse scheme: the head only, as when fine-tuning a pretrained backbone.
HEAD_LAYERS = ["head_conv", "head_bn", "fc"]

SCHEMES = [
    # name, pock optimizer, Keras layers that train (None: all), recipe "trainable" rules
    ("sgd", {"type": "sgd", "lr": 0.05}, None, None),
    ("sgd_momentum", {"type": "sgd", "lr": 0.05, "momentum": 0.9}, None, None),
    ("head_sgd_momentum", {"type": "sgd", "lr": 0.05, "momentum": 0.9}, HEAD_LAYERS,
     [{"match": f"model/{layer}/*"} for layer in HEAD_LAYERS]),
]
