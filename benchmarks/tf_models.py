"""torchvision's MobileNetV2 and ResNet-18 as Keras 2 (tf-keras) models, for the TensorFlow side.

The same architecture in TensorFlow's native layout (NHWC, HWIO kernels); each conv, BatchNorm
and dense layer records the torchvision module name it stands for, so tf_side.py can load the
weights of the ONNX file by name. Importing this module imports TensorFlow: only tf_side.py does.
"""
import tf_keras as keras

L = keras.layers


class Dropout(L.Dropout):
    """Dropout that can be switched off: the loss check compares a dropout-free first loss with
    PyTorch's (the two frameworks draw different masks), the timed steps run with it on."""
    enabled = True

    def call(self, inputs, training=None):
        return super().call(inputs, training) if self.enabled else inputs


class Builder:
    """Adds layers under torchvision's names. `frozen_bn`: names of the BatchNorms that run in
    inference form (freeze_batchnorm_stats); their shift may still train, so they are called with
    training=False rather than made untrainable (Keras' trainable=False would freeze the shift)."""

    def __init__(self, frozen_bn):
        self.frozen_bn = set(frozen_bn)
        self.layers = {}    # torchvision module name -> (kind, Keras layer)

    def _add(self, name, kind, layer):
        self.layers[name] = (kind, layer)
        return layer

    def conv(self, x, name, filters, k, stride=1, pad=0, depthwise=False):
        # PyTorch pads both sides; Keras' "same" pads a stride-2 conv on the bottom/right only,
        # which would shift every window: explicit symmetric padding, then a "valid" conv.
        if pad:
            x = L.ZeroPadding2D(pad)(x)
        keras_name = name.replace(".", "_")
        if depthwise:
            layer = L.DepthwiseConv2D(k, stride, use_bias=False, name=keras_name)
        else:
            layer = L.Conv2D(filters, k, stride, use_bias=False, name=keras_name)
        return self._add(name, "dwconv" if depthwise else "conv", layer)(x)

    def bn(self, x, name):
        layer = self._add(name, "bn", L.BatchNormalization(momentum=0.9, epsilon=1e-5, name=name.replace(".", "_")))
        return layer(x, training=False) if name in self.frozen_bn else layer(x)

    def dense(self, x, name, units):
        return self._add(name, "dense", L.Dense(units, name=name.replace(".", "_")))(x)


def _conv_bn_act(b, x, name, filters, k, stride=1, depthwise=False):
    """torchvision's Conv2dNormActivation with ReLU6: NAME.0 conv, NAME.1 BatchNorm."""
    x = b.conv(x, f"{name}.0", filters, k, stride, (k - 1) // 2, depthwise)
    return L.ReLU(max_value=6.0)(b.bn(x, f"{name}.1"))


def mobilenet_v2(b, classes=1000, size=128):
    inp = L.Input((size, size, 3), name="input")
    x = _conv_bn_act(b, inp, "features.0", 32, 3, 2)
    cin, idx = 32, 1
    for t, c, n, s in [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1),
                       (6, 160, 3, 2), (6, 320, 1, 1)]:
        for i in range(n):
            stride, name, hidden = (s if i == 0 else 1), f"features.{idx}.conv", cin * t
            y, j = x, 0
            if t != 1:
                y, j = _conv_bn_act(b, y, f"{name}.0", hidden, 1), 1
            y = _conv_bn_act(b, y, f"{name}.{j}", hidden, 3, stride, depthwise=True)
            y = b.bn(b.conv(y, f"{name}.{j + 1}", c, 1), f"{name}.{j + 2}")
            x = L.Add()([x, y]) if stride == 1 and cin == c else y
            cin, idx = c, idx + 1
    x = _conv_bn_act(b, x, "features.18", 1280, 1)
    x = L.GlobalAveragePooling2D()(x)
    x = Dropout(0.2)(x)
    return keras.Model(inp, b.dense(x, "classifier.1", classes))


def _basic_block(b, x, name, cout, stride):
    y = L.ReLU()(b.bn(b.conv(x, f"{name}.conv1", cout, 3, stride, 1), f"{name}.bn1"))
    y = b.bn(b.conv(y, f"{name}.conv2", cout, 3, 1, 1), f"{name}.bn2")
    if stride != 1 or x.shape[-1] != cout:
        x = b.bn(b.conv(x, f"{name}.downsample.0", cout, 1, stride), f"{name}.downsample.1")
    return L.ReLU()(L.Add()([x, y]))


def resnet18(b, classes=1000, size=128):
    inp = L.Input((size, size, 3), name="input")
    x = L.ReLU()(b.bn(b.conv(inp, "conv1", 64, 7, 2, 3), "bn1"))
    # PyTorch's max pool pads with -inf; after a ReLU every value is >= 0, so zeros are the same.
    x = L.MaxPooling2D(3, 2)(L.ZeroPadding2D(1)(x))
    for stage, cout in enumerate([64, 128, 256, 512], start=1):
        for i in range(2):
            x = _basic_block(b, x, f"layer{stage}.{i}", cout, 2 if stage > 1 and i == 0 else 1)
    x = L.GlobalAveragePooling2D()(x)
    return keras.Model(inp, b.dense(x, "fc", classes))


MODELS = {"mobilenetv2": mobilenet_v2, "resnet18": resnet18}
