#!/usr/bin/env python3
"""JAX <-> PockEngine parity through jax2onnx and pockc (docs/parity.md, "JAX").

A small Flax NNX model (a convolution, a normalization written by hand, a two-layer MLP) is
exported with jax2onnx at its defaults, as docs/exporting.md shows. `pockc compile` + `pockc
infer` must reproduce the model's outputs; `pockc compile --recipe` + `pockc train` must reproduce
optax's SGD-momentum and AdamW runs: the loss step by step and every weight after the last step.

JAX, Flax, optax and jax2onnx are not Debian packages: scripts/prepare-test-venvs.sh installs
them into BUILD/jax-venv. Run by any python3 with --venv, the script runs itself again under the
venv's python. Exit status: 0 passed, 1 a mismatch or error, 77 (ctest SKIP) when there is no
venv.
"""
import argparse
import itertools
import os
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from venv_reexec import reexec_in_venv  # noqa: E402


BATCH = 4
STEPS = 20
IMAGE = (8, 8, 3)  # NHWC, as Flax's convolutions take it
CLASSES = 10
EPS = 1e-5
OPTIMIZERS = [("sgd_momentum", {"type": "sgd", "lr": 0.05, "momentum": 0.9}),
              ("adamw", {"type": "adamw", "lr": 1e-3, "weight_decay": 0.01})]


def build_model():
    import jax
    import jax.numpy as jnp
    import numpy as np
    from flax import nnx

    class ConvNormMlp(nnx.Module):
        def __init__(self, rngs):
            self.conv = nnx.Conv(IMAGE[2], 8, kernel_size=(3, 3), padding="SAME", rngs=rngs)
            self.gamma = nnx.Param(jnp.ones((8,)))
            self.beta = nnx.Param(jnp.zeros((8,)))
            self.fc1 = nnx.Linear(IMAGE[0] * IMAGE[1] * 8, 32, rngs=rngs)
            self.fc2 = nnx.Linear(32, CLASSES, rngs=rngs)

        def __call__(self, x):
            h = self.conv(x)
            # The normalization by hand (over H, W and C, per sample: a one-group GroupNorm).
            mu = jnp.mean(h, axis=(1, 2, 3), keepdims=True)
            d = h - mu
            var = jnp.mean(d * d, axis=(1, 2, 3), keepdims=True)
            h = jax.nn.relu(d / jnp.sqrt(var + EPS) * self.gamma[...] + self.beta[...])
            h = jax.nn.relu(self.fc1(h.reshape(h.shape[0], -1)))
            return self.fc2(h)

    model = ConvNormMlp(nnx.Rngs(0))
    # Every weight random and distinct (fresh biases are zeros, gamma ones): each ONNX initializer
    # then matches one JAX parameter only, and a swapped tensor shows.
    rng = np.random.RandomState(1)
    state = nnx.state(model, nnx.Param)
    nnx.update(model, jax.tree.map(lambda v: v + 0.1 * rng.standard_normal(v.shape).astype(np.float32), state))
    return model


def make_batches():
    import numpy as np
    rng = np.random.RandomState(2)
    x = rng.standard_normal((STEPS * BATCH, *IMAGE)).astype(np.float32)
    y = rng.randint(0, CLASSES, STEPS * BATCH).astype(np.int64)
    return x, y


def param_leaves(state):
    import jax
    import numpy as np
    return {jax.tree_util.keystr(path): np.asarray(v) for path, v in jax.tree_util.tree_flatten_with_path(state)[0]}


def to_onnx_layout(value, perm, shape):
    import numpy as np
    return np.transpose(value, perm).reshape(shape)


def match_initializers(onnx_path, params, Mismatch):
    """{JAX parameter: (initializer, axis permutation, ONNX shape)}. jax2onnx names initializers
    after nothing in the model (const_4) and stores kernels transposed (HWIO -> OIHW) or reshaped
    (gamma as [1, 1, 1, C]), so each parameter is found by its values."""
    import numpy as np
    import onnx
    from onnx import numpy_helper
    inits = {t.name: numpy_helper.to_array(t) for t in onnx.load(onnx_path).graph.initializer
             if t.data_type == onnx.TensorProto.FLOAT and int(np.prod(t.dims)) > 1}
    found = {}
    for name, value in params.items():
        for init, data in inits.items():
            if data.size != value.size or init in [f[0] for f in found.values()]:
                continue
            perm = next((p for p in itertools.permutations(range(value.ndim))
                         if np.array_equal(to_onnx_layout(value, p, data.shape), data)), None)
            if perm is not None:
                found[name] = (init, perm, data.shape)
                break
        if name not in found:
            raise Mismatch(f"no initializer of the export holds parameter {name} {value.shape}")
    extra = sorted(set(inits) - {f[0] for f in found.values()})
    if extra:
        raise Mismatch(f"the export has float initializers that are no parameter (pock would train them): {extra}")
    return found


def jax_train(model, optimizer, x, y):
    """optax's run: losses, final weights and each parameter's largest gradient magnitude."""
    import jax
    import numpy as np
    import optax
    from flax import nnx
    graphdef, state = nnx.split(model, nnx.Param)

    def loss_fn(state, xb, yb):
        return optax.softmax_cross_entropy_with_integer_labels(nnx.merge(graphdef, state)(xb), yb).mean()

    if optimizer["type"] == "sgd":
        opt = optax.sgd(optimizer["lr"], momentum=optimizer["momentum"])
    else:
        opt = optax.adamw(optimizer["lr"], weight_decay=optimizer["weight_decay"])
    opt_state = opt.init(state)
    step = jax.jit(jax.value_and_grad(loss_fn))
    losses, max_grad = [], {}
    for s in range(STEPS):
        batch = slice(s * BATCH, (s + 1) * BATCH)
        loss, grads = step(state, x[batch], y[batch])
        for name, g in param_leaves(grads).items():
            max_grad[name] = max(max_grad.get(name, 0.0), float(np.abs(g).max()))
        updates, opt_state = opt.update(grads, opt_state, state)
        state = optax.apply_updates(state, updates)
        losses.append(float(loss))
    return losses, param_leaves(state), max_grad


def check(pockc, work):
    import numpy as np
    from jax2onnx import to_onnx
    from parity_common import INFER_REL, NOISE_GRAD, Mismatch, compare_run, pockc_train, rel_err, run
    import onnx
    from flax import nnx

    model = build_model()
    onnx_path = os.path.join(work, "model.onnx")
    # As docs/exporting.md shows: jax2onnx's defaults, a symbolic batch that the recipe fills.
    to_onnx(model, [("B", *IMAGE)], return_mode="file", output_path=onnx_path)
    graph = onnx.load(onnx_path).graph
    input_name, output_name = graph.input[0].name, graph.output[0].name
    opset = next(o.version for o in onnx.load(onnx_path).opset_import if o.domain in ("", "ai.onnx"))
    params = param_leaves(nnx.state(model, nnx.Param))
    layout = match_initializers(onnx_path, params, Mismatch)
    x, y = make_batches()

    blob = os.path.join(work, "infer.pock")
    run([pockc, "compile", onnx_path, "-o", blob, "--input-shape", f"@B={BATCH}"], "pockc compile")
    data, out = os.path.join(work, "infer_data.npz"), os.path.join(work, "infer_out.npz")
    np.savez(data, **{input_name: x[:BATCH]})
    run([pockc, "infer", blob, "--data", data, "--out", out], "pockc infer")
    err = rel_err(np.load(out)[output_name], np.asarray(model(x[:BATCH])))
    if err > INFER_REL:
        raise Mismatch(f"inference differs: max rel error {err:.3g} > {INFER_REL}")
    print(f"PASS infer jax2onnx opset {opset}: max rel error {err:.2e}", flush=True)

    report = []
    for name, optimizer in OPTIMIZERS:
        want_losses, want_state, max_grad = jax_train(build_model(), optimizer, x, y)
        largest = max(max_grad.values())
        noise_only = {n for n, g in max_grad.items() if g <= NOISE_GRAD * largest}
        want = {layout[n][0]: to_onnx_layout(v, layout[n][1], layout[n][2])
                for n, v in want_state.items() if n not in noise_only}
        recipe = {"batch_size": BATCH, "optimizer": optimizer,
                  "loss": {"type": "cross_entropy", "logits": output_name, "labels": "label"}}
        got_losses, got = pockc_train(pockc, onnx_path, work, recipe, {input_name: x, "label": y}, STEPS)
        compare_run(name, got_losses, want_losses, got, want, noise_only, report, reference="JAX")
    print("PASS train jax2onnx: " + "; ".join(report), flush=True)
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pockc", required=True, help="path to the pockc binary")
    ap.add_argument("--venv", default="", help="the JAX venv (scripts/prepare-test-venvs.sh) to run under")
    ap.add_argument("--work", default="", help="keep files here instead of a temporary directory")
    args = ap.parse_args()
    reexec_in_venv(args.venv, ("jax", "jax2onnx", "optax", "flax"), "scripts/prepare-test-venvs.sh BUILD_DIR")
    from parity_common import Mismatch
    start = time.time()
    with tempfile.TemporaryDirectory() as tmp:
        work = args.work or tmp
        os.makedirs(work, exist_ok=True)
        try:
            status = check(os.path.abspath(args.pockc), work)
        except Mismatch as e:
            print(f"FAIL jax2onnx: {e}", flush=True)
            status = 1
    print(f"{time.time() - start:.1f} s")
    return status


if __name__ == "__main__":
    sys.exit(main())
