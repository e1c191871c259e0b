"""TensorFlow side of the benchmark, one job per process (run_bench.py starts it, opt-in).

  tf_side.py train WORKLOAD SCHEME MODEL.onnx BATCH.npz --threads T --steps N --warmup K
             --lr LR [--expect-loss L] [--xla]
                                      training steps of the Keras model (tf_models.py) with the
                                      ONNX file's weights; prints one JSON line

Same model, weights (read by name from the ONNX file pockc compiles), batch, scheme and SGD with
momentum as the other sides; TensorFlow's own layout, NHWC. The step is one tf.function
(graph mode, TensorFlow's normal fast path; --xla compiles it with XLA). Runs in its own venv
(prepare_tf.sh): it imports neither torch nor anything of the PyTorch side.
"""
import argparse
import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import workloads  # noqa: E402  (plain Python: it imports torch only in functions not called here)
from proc_status import rss_mb  # noqa: E402

LOSS_TOLERANCE = 1e-4   # relative; float32 summation order differs between NCHW and NHWC kernels
BN_SUFFIXES = {"weight": "gamma", "bias": "beta", "running_mean": "moving_mean", "running_var": "moving_variance"}


def onnx_weights(path):
    """The model's float parameters and BatchNorm statistics in the ONNX file, by PyTorch name."""
    import onnx
    from onnx import numpy_helper
    out = {}
    for init in onnx.load(path).graph.initializer:
        if init.name.rsplit(".", 1)[-1] in BN_SUFFIXES:
            out[init.name] = numpy_helper.to_array(init)
    return out


class _Param:
    """What workloads.trainable reads of a parameter (PyTorch layout shape, dim())."""
    def __init__(self, a):
        self.shape = a.shape
        self._ndim = a.ndim

    def dim(self):
        return self._ndim


class _Named:
    def __init__(self, params):
        self._params = params

    def named_parameters(self):
        return ((n, _Param(a)) for n, a in self._params.items())


def load_weights(builder, weights):
    """Assigns every weight to its Keras variable; returns {PyTorch parameter name: (variable,
    axis of its output channels)}. Fails if a weight of the file or a variable is left over."""
    params, used = {}, set()
    for name, (kind, layer) in builder.layers.items():
        def take(suffix):
            used.add(f"{name}.{suffix}")
            return weights[f"{name}.{suffix}"]
        if kind == "conv":      # OIHW -> HWIO
            layer.kernel.assign(take("weight").transpose(2, 3, 1, 0))
            params[f"{name}.weight"] = (layer.kernel, 3)
        elif kind == "dwconv":  # (C, 1, kh, kw) -> (kh, kw, C, 1)
            layer.depthwise_kernel.assign(take("weight").transpose(2, 3, 0, 1))
            params[f"{name}.weight"] = (layer.depthwise_kernel, 2)
        elif kind == "dense":   # (out, in) -> (in, out)
            layer.kernel.assign(take("weight").T)
            layer.bias.assign(take("bias"))
            params[f"{name}.weight"], params[f"{name}.bias"] = (layer.kernel, 1), (layer.bias, 0)
        else:
            for suffix, attr in BN_SUFFIXES.items():
                getattr(layer, attr).assign(take(suffix))
            params[f"{name}.weight"], params[f"{name}.bias"] = (layer.gamma, 0), (layer.beta, 0)
    left = sorted(set(weights) - used)
    if left:
        raise SystemExit(f"weights with no Keras layer: {left[:5]}")
    return params


def cmd_train(args):
    import tensorflow as tf
    import tf_models
    tf.config.threading.set_intra_op_parallelism_threads(args.threads)
    # One op at a time, each on T threads: T threads in all, like the other sides.
    tf.config.threading.set_inter_op_parallelism_threads(1)
    rss_import = rss_mb()
    w = workloads.by_name(args.workload)
    scheme = w.scheme(args.scheme)
    weights = onnx_weights(args.model)
    torch_params = {n: a for n, a in weights.items() if n.endswith((".weight", ".bias"))}
    chosen = workloads.trainable(_Named(torch_params), scheme)
    # workloads.frozen_bn_modules, by name: a BatchNorm whose scale does not train
    bns = {n[:-len(".running_mean")] for n in weights if n.endswith(".running_mean")}
    frozen_bn = {b for b in bns if f"{b}.weight" not in chosen} if scheme.freeze_bn_stats else set()
    builder = tf_models.Builder(frozen_bn)
    model = tf_models.MODELS[w.name](builder, w.classes, next(iter(w.input_shapes.values()))[0][2])
    params = load_weights(builder, weights)
    train_vars, masks = [], []
    for name, rows in chosen.items():
        var, axis = params[name]
        train_vars.append(var)
        mask = None
        if rows is not None and rows < var.shape[axis]:
            # No partial-channel update in TensorFlow either: the full weight gradient is computed
            # and the frozen output channels' rows are zeroed, so SGD leaves them unchanged.
            shape = [1] * len(var.shape)
            shape[axis] = var.shape[axis]
            m = np.zeros(shape, np.float32)
            m.reshape(-1)[:rows] = 1
            mask = tf.constant(m)
        masks.append(mask)
    opt = tf_models.keras.optimizers.SGD(learning_rate=args.lr, momentum=0.9)
    opt.build(train_vars)

    batch = np.load(args.batch)
    x = tf.constant(np.ascontiguousarray(batch["input"].transpose(0, 2, 3, 1)))   # NCHW -> NHWC
    y = tf.constant(batch["label"].astype(np.int32))

    def loss_of(logits):
        return tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))

    # Same weights and batch: the dropout-free first loss must be PyTorch's (run_bench.py passes
    # it). An eager forward; in train mode it moves the running statistics of the BatchNorms that
    # use batch statistics, which no training-mode output reads.
    dropouts = [layer for layer in model.layers if isinstance(layer, tf_models.Dropout)]
    for d in dropouts:
        d.enabled = False
    check_loss = float(loss_of(model(x, training=True)))
    for d in dropouts:
        d.enabled = True
    if args.expect_loss is not None:
        rel = abs(check_loss - args.expect_loss) / max(abs(args.expect_loss), 1e-12)
        if rel > LOSS_TOLERANCE:
            raise SystemExit(f"first loss {check_loss:.7g} is not PyTorch's {args.expect_loss:.7g} "
                             f"(relative difference {rel:.2e} > {LOSS_TOLERANCE})")

    @tf.function(jit_compile=args.xla)
    def step():
        with tf.GradientTape() as tape:
            loss = loss_of(model(x, training=True))
        grads = tape.gradient(loss, train_vars)
        grads = [g if m is None else g * m for g, m in zip(grads, masks)]
        opt.apply_gradients(zip(grads, train_vars))
        return loss

    rss_model = rss_mb()
    samples, cpu_samples, losses = [], [], []
    for i in range(args.warmup + args.steps):
        t0, c0 = time.perf_counter(), time.process_time()
        loss = float(step())   # the value: the step has finished
        dt, cpu = (time.perf_counter() - t0) * 1e3, (time.process_time() - c0) * 1e3
        losses.append(loss)
        if i >= args.warmup:
            samples.append(dt)
            cpu_samples.append(cpu)
    print(json.dumps({"samples_ms": samples, "cpu_samples_ms": cpu_samples, "losses": losses,
                      "check_loss": check_loss, "trainable_params": int(sum(np.prod(v.shape) for v in train_vars)),
                      "masked_weights": sum(m is not None for m in masks), "rss_after_import_mb": rss_import,
                      "rss_after_model_mb": rss_model, "peak_rss_mb": rss_mb("VmHWM"), "xla": args.xla,
                      "tensorflow": tf.__version__,
                      "onednn": os.environ.get("TF_ENABLE_ONEDNN_OPTS", "default")}))


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    t = sub.add_parser("train")
    t.add_argument("workload", help="mobilenetv2 or resnet18 (tf_models.MODELS)")
    t.add_argument("scheme", help="a scheme of the workload: full, sparse, sparse-late")
    t.add_argument("model", help="the ONNX file the weights come from")
    t.add_argument("batch", help="batch.npz (input NCHW, label)")
    t.add_argument("--threads", type=int, default=1)
    t.add_argument("--steps", type=int, default=10)
    t.add_argument("--warmup", type=int, default=2)
    t.add_argument("--lr", type=float, required=True)
    t.add_argument("--expect-loss", type=float, help="PyTorch's dropout-free first loss; fail if it differs")
    # Not in run_bench.py: on TF 2.21's CPU XLA the step ran 10x slower and its loss was NaN from
    # the second step on (2026-12-04); kept to reproduce that.
    t.add_argument("--xla", action="store_true", help="compile the step with XLA (jit_compile=True)")
    cmd_train(ap.parse_args())


if __name__ == "__main__":
    main()
