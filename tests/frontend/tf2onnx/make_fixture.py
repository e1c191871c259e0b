"""Writes the TensorFlow fixture of check_tf2onnx.py: a Keras model exported by tf2onnx, and what
TensorFlow itself computes with it. Run by hand, not by the tests (TensorFlow is not a Debian
package and CI does not install it); the outputs are committed:

    python3.11 -m venv VENV && VENV/bin/pip install tensorflow tf_keras tf2onnx
    VENV/bin/python tests/frontend/tf2onnx/make_fixture.py      # writes the two files below

  mobilenetv2_mini.onnx  tf2onnx 1.17 output, opset 17, NHWC input "x" [N, 16, 16, 3] with a
                         symbolic N, output "fc" [N, 10]
  reference.npz          inputs, labels and TensorFlow's results (keys listed in save_reference)

Verified with TensorFlow 2.21, tf_keras 2.21, tf2onnx 1.17, Python 3.11 (docs/onnx.md,
"TensorFlow"). The model is MobileNetV2's structure cut down (Keras's own
keras.applications.MobileNetV2 keeps a 1280-channel last layer at any width, a 1.6 MB file):
Conv2D + BatchNormalization + ReLU6 stem, inverted residual blocks with DepthwiseConv2D,
ZeroPadding2D before the stride-2 depthwise (as Keras's MobileNetV2 does), Add, a 1x1 head,
GlobalAveragePooling2D, Dense. No Dropout: the inference export drops it, so it would make the two
trainings differ.

Three choices make the export trainable, each documented in docs/exporting.md:
- tf_keras (Keras 2), not Keras 3: Keras 3 writes BatchNormalization as arithmetic, which TF's
  graph optimizer folds with the variables into one scale and shift per channel; Keras 2's fused
  batch norm exports as an ONNX BatchNormalization with its four tensors.
- tf2onnx without its "remove_back_to_back" optimizer (it folds BatchNormalization into the
  preceding Conv's weights) and without "merge_duplication" (it merges equal initializers, e.g.
  all gamma = 1 and all running variances = 1, into one shared tensor).
- The BatchNormalization nodes get Keras's momentum written in: tf2onnx leaves it out, and ONNX's
  default (0.9) is not Keras's (0.99).
"""
import os
import sys

os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")   # plain TF kernels: reproducible float32
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import onnx  # noqa: E402
import tensorflow as tf  # noqa: E402
import tf_keras as keras  # noqa: E402
import tf2onnx  # noqa: E402
import tf2onnx.optimizer  # noqa: E402  (tf2onnx does not import it on attribute access)
from onnx import numpy_helper  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from schemes import (BATCH, BN_EPSILON, BN_MOMENTUM, CLASSES, IMAGE, INFER_SAMPLES,  # noqa: E402
                     SCHEMES, STEPS)

HERE = os.path.dirname(os.path.abspath(__file__))
SEED = 7
layers = keras.layers


def conv_bn(x, filters, kernel, stride, name, act=True, depthwise=False, padding="same"):
    if depthwise:
        x = layers.DepthwiseConv2D(kernel, strides=stride, padding=padding, use_bias=False, name=name + "_conv")(x)
    else:
        x = layers.Conv2D(filters, kernel, strides=stride, padding=padding, use_bias=False, name=name + "_conv")(x)
    x = layers.BatchNormalization(momentum=BN_MOMENTUM, epsilon=BN_EPSILON, name=name + "_bn")(x)
    return layers.ReLU(6.0, name=name + "_relu")(x) if act else x


def inverted_residual(x, expand, out, stride, name):
    """Keras MobileNetV2's _inverted_res_block: expand 1x1, depthwise 3x3, project 1x1, Add."""
    cin = x.shape[-1]
    y = conv_bn(x, cin * expand, 1, 1, name + "_expand") if expand != 1 else x
    if stride == 2:  # Keras pads explicitly, then runs the depthwise "valid"
        y = layers.ZeroPadding2D(((0, 1), (0, 1)), name=name + "_pad")(y)
    y = conv_bn(y, None, 3, stride, name + "_depthwise", depthwise=True, padding="same" if stride == 1 else "valid")
    y = conv_bn(y, out, 1, 1, name + "_project", act=False)
    return layers.Add(name=name + "_add")([x, y]) if stride == 1 and cin == out else y


def build_model():
    inp = keras.Input((IMAGE, IMAGE, 3), name="x")
    x = conv_bn(inp, 8, 3, 2, "stem")
    x = inverted_residual(x, 1, 8, 1, "block1")
    x = inverted_residual(x, 4, 12, 2, "block2")
    x = inverted_residual(x, 4, 12, 1, "block3")
    x = conv_bn(x, 32, 1, 1, "head")
    x = layers.GlobalAveragePooling2D(name="pool")(x)
    out = layers.Dense(CLASSES, name="fc")(x)
    return keras.Model(inp, out, name="model")


def randomize(model, rng):
    """Every weight random, as in a pretrained model: distinct values let the ONNX initializers be
    matched to the Keras variables by value, and a swapped or ignored tensor would show."""
    for layer in model.layers:
        values = []
        for v in layer.weights:
            shape, name = tuple(v.shape), v.name.split("/")[-1].split(":")[0]
            if name in ("kernel", "depthwise_kernel"):
                fan_in = np.prod(shape[:-1]) if name == "kernel" else np.prod(shape[:2])
                a = rng.normal(0, np.sqrt(2.0 / fan_in), shape)
            elif name == "gamma":
                a = rng.uniform(0.8, 1.2, shape)
            elif name == "moving_variance":
                a = rng.uniform(0.5, 1.5, shape)
            else:  # beta, moving_mean, bias
                a = rng.normal(0, 0.1, shape)
            values.append(a.astype(np.float32))
        if values:
            layer.set_weights(values)


def onnx_layout(layer, var_name, a):
    """A Keras variable in the layout tf2onnx writes: OIHW convolution kernels."""
    if var_name == "kernel" and a.ndim == 4:             # Conv2D [kh, kw, cin, cout]
        return a.transpose(3, 2, 0, 1)
    if var_name == "depthwise_kernel":                   # [kh, kw, c, 1] -> [c, 1, kh, kw]
        return a.transpose(2, 3, 0, 1)
    return a                                             # Dense [in, out] (MatMul), vectors


def variables(model):
    """(layer, short name, variable) for every weight of the model."""
    out = []
    for layer in model.layers:
        for v in layer.weights:
            out.append((layer, v.name.split("/")[-1].split(":")[0], v))
    return out


def export(model, path):
    spec = (tf.TensorSpec([None, IMAGE, IMAGE, 3], tf.float32, name="x"),)
    optimizers = {k: v for k, v in tf2onnx.optimizer._get_optimizers().items()
                  if k not in ("remove_back_to_back", "merge_duplication")}
    proto, _ = tf2onnx.convert.from_keras(model, input_signature=spec, opset=17, optimizers=optimizers)
    for node in proto.graph.node:
        if node.op_type == "BatchNormalization":
            assert not any(a.name == "momentum" for a in node.attribute), "tf2onnx now writes momentum"
            node.attribute.append(onnx.helper.make_attribute("momentum", BN_MOMENTUM))
    onnx.checker.check_model(proto)
    onnx.save(proto, path)
    return proto


def match_initializers(model, proto):
    """Keras variable -> ONNX initializer name, by exact value in ONNX layout. Fails when tf2onnx
    folded or merged a weight, since pock could then not train what Keras trains."""
    inits = {t.name: numpy_helper.to_array(t) for t in proto.graph.initializer}
    names = {}
    for layer, short, v in variables(model):
        a = onnx_layout(layer, short, v.numpy())
        hits = [n for n, b in inits.items() if b.shape == a.shape and np.array_equal(a, b)]
        assert len(hits) == 1, f"{v.name}: {len(hits)} ONNX initializers hold its value: {hits}"
        names[v.ref()] = hits[0]
    weights = {n for n, b in inits.items() if b.dtype == np.float32 and b.size > 1}
    unmatched = weights - set(names.values())
    assert not unmatched, f"float initializers that are no Keras variable (folded?): {unmatched}"
    return names


def relu_probe(model):
    """The model with the input of every ReLU6 as extra outputs (shared layers)."""
    relus = [layer.input for layer in model.layers if isinstance(layer, layers.ReLU)]
    return keras.Model(model.input, [model.output] + relus)


def train(model, names, initial, optimizer_spec, trainable_layers, batches):
    """TensorFlow's own training: eager GradientTape steps, SparseCategoricalCrossentropy on
    logits (the batch mean, as pock's cross_entropy), tf_keras SGD (its momentum form
    v = m v - lr g, w += v equals PyTorch's for a constant rate). A BatchNormalization layer with
    trainable = False runs in inference mode in Keras 2, which pock's freeze_batchnorm_stats
    does for the BatchNorm of a frozen layer."""
    for layer, short, v in variables(model):
        v.assign(initial[v.ref()])
    for layer in model.layers:
        layer.trainable = trainable_layers is None or layer.name in trainable_layers
    probe = relu_probe(model)
    opt = keras.optimizers.SGD(learning_rate=optimizer_spec["lr"], momentum=optimizer_spec.get("momentum", 0.0))
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    losses, kinks = [], []
    for step, (x, y) in enumerate(batches):
        with tf.GradientTape() as tape:
            outs = probe(x, training=True)
            loss = loss_fn(y, outs[0])
        # An activation within float noise of a ReLU6 kink may take the other branch in pock.
        if any(np.any(np.abs(r.numpy() - k) <= 1e-6 * max(1.0, k)) for r in outs[1:] for k in (0.0, 6.0)):
            kinks.append(step + 1)
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        losses.append(float(loss.numpy()))
    trained = {v.ref() for v in model.trainable_variables}
    weights = {names[v.ref()]: onnx_layout(layer, short, v.numpy()) for layer, short, v in variables(model)
               if v.ref() in trained}
    state = {names[v.ref()]: v.numpy() for layer, short, v in variables(model) if short.startswith("moving_")}
    for layer in model.layers:
        layer.trainable = True
    return np.array(losses), weights, state, kinks


def main():
    tf.config.threading.set_inter_op_parallelism_threads(1)
    tf.config.threading.set_intra_op_parallelism_threads(1)
    tf.config.experimental.enable_op_determinism()
    tf.random.set_seed(SEED)
    rng = np.random.default_rng(SEED)
    model = build_model()
    randomize(model, rng)
    proto = export(model, os.path.join(HERE, "mobilenetv2_mini.onnx"))
    names = match_initializers(model, proto)
    initial = {v.ref(): v.numpy() for _, _, v in variables(model)}

    ref = {}
    ref["infer_x"] = rng.normal(0, 1, (INFER_SAMPLES, IMAGE, IMAGE, 3)).astype(np.float32)
    ref["infer_logits"] = model(ref["infer_x"], training=False).numpy()
    train_x = rng.normal(0, 1, (STEPS * BATCH, IMAGE, IMAGE, 3)).astype(np.float32)
    train_label = rng.integers(0, CLASSES, STEPS * BATCH).astype(np.int64)
    ref["train_x"], ref["train_label"] = train_x, train_label
    batches = [(train_x[i * BATCH:(i + 1) * BATCH], train_label[i * BATCH:(i + 1) * BATCH]) for i in range(STEPS)]
    for layer, short, v in variables(model):
        ref[f"initial|{names[v.ref()]}"] = onnx_layout(layer, short, initial[v.ref()])
    for scheme, optimizer, trainable_layers, _ in SCHEMES:
        losses, weights, state, kinks = train(model, names, initial, optimizer, trainable_layers, batches)
        if kinks:
            sys.exit(f"{scheme}: ReLU6 inputs within 1e-6 of a kink at steps {kinks}: change SEED")
        ref[f"{scheme}|loss"] = losses
        for n, a in weights.items():
            ref[f"{scheme}|weight|{n}"] = a
        for n, a in state.items():
            ref[f"{scheme}|state|{n}"] = a
        print(f"{scheme}: losses {np.array2string(losses, precision=5)}, {len(weights)} trained tensors")
    np.savez_compressed(os.path.join(HERE, "reference.npz"), **ref)
    print(f"TensorFlow {tf.__version__}, tf_keras {keras.__version__}, tf2onnx {tf2onnx.__version__}; "
          f"{sum(np.prod(v.shape) for _, _, v in variables(model))} weights, {len(proto.graph.node)} ONNX nodes")


if __name__ == "__main__":
    main()
