#!/usr/bin/python3
"""PyTorch <-> PockEngine parity through ONNX and pockc (docs/parity.md).

For each model family (models.py): PyTorch exports ONNX in training mode without constant
folding; `pockc compile` + `pockc infer` must reproduce PyTorch's eval-mode outputs, and
`pockc compile --recipe` + `pockc train` must reproduce PyTorch's losses step by step and its
final trainable weights, for full backprop with SGD-momentum, full backprop with AdamW, and a
sparse scheme. Runs under Debian's /usr/bin/python3 (python3-torch, python3-onnx).

Exit status: 0 all passed, 1 a mismatch or error, 77 (ctest SKIP) when the training stage was
asked for but this build cannot compile recipes yet.
"""
import argparse
import warnings
import copy
import os
import sys
import tempfile
import time

SKIP = 77
try:
    import numpy as np
    import onnx
    from onnx import numpy_helper
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
except ImportError as e:  # run by ctest on a machine without Debian's python3-torch / python3-onnx
    print(f"SKIP: {e} (install python3-torch and python3-onnx, run with /usr/bin/python3)")
    sys.exit(SKIP)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import models  # noqa: E402
from parity_common import (INFER_REL, NOISE_GRAD, Mismatch, NotBuilt, compare_run, pockc_train,  # noqa: E402
                           rel_err, run)


STEPS = 20


def export(fam, opset, path, dynamic=False):
    """Exports in training mode and returns the state the file holds (tracing in training mode
    runs BatchNorm's forward once, so the running statistics are read back from the file).
    `dynamic` marks the leading (batch) and, for token inputs, the sequence axis symbolic."""
    model = fam.model
    before = copy.deepcopy(model.state_dict())
    model.train()
    axes = None
    if dynamic:
        axes = {name: ({0: "batch", 1: "seq"} if t.dim() == 2 else {0: "batch"}) for name, t in fam.inputs.items()}
    torch.onnx.export(model, tuple(fam.inputs.values()), path, input_names=list(fam.inputs),
                      output_names=["logits"], opset_version=opset, do_constant_folding=False,
                      training=torch.onnx.TrainingMode.TRAINING, dynamic_axes=axes)
    model.load_state_dict(before)
    inits = {t.name: numpy_helper.to_array(t) for t in onnx.load(path).graph.initializer}
    state = copy.deepcopy(before)
    for name in state:
        if name in inits and state[name].shape == inits[name].shape:
            state[name] = torch.from_numpy(inits[name].copy()).to(state[name].dtype)
    missing = [n for n, p in model.named_parameters() if n not in inits]
    if missing:
        raise Mismatch(f"the export renamed or folded parameters: {missing[:5]}")
    return state


def check_infer(fam, opset, onnx_path, state, work, pockc, compressed, shape_args=()):
    model = copy.deepcopy(fam.model)
    model.load_state_dict(state)
    model.eval()
    with torch.no_grad():
        want = model(*fam.inputs.values()).numpy()
    data = os.path.join(work, "infer_data.npz")
    arrays = {k: v.numpy() for k, v in fam.inputs.items()}
    (np.savez_compressed if compressed else np.savez)(data, **arrays)
    blob = os.path.join(work, "infer.pock")
    out = os.path.join(work, "infer_out.npz")
    run([pockc, "compile", onnx_path, "-o", blob, *shape_args], "pockc compile")
    run([pockc, "infer", blob, "--data", data, "--out", out], "pockc infer")
    got = np.load(out)["logits"]
    err = rel_err(got, want)
    if err > INFER_REL:
        raise Mismatch(f"inference differs: max rel error {err:.3g} > {INFER_REL}")
    return err


def schemes(fam):
    sgd = {"type": "sgd", "lr": fam.lr_sgd, "momentum": 0.9}
    adamw = {"type": "adamw", "lr": fam.lr_adamw, "weight_decay": 0.01}
    all_params = {n for n, _ in fam.model.named_parameters()}
    return [("full_sgd_momentum", sgd, None, all_params),
            ("full_adamw", adamw, None, all_params),
            ("sparse_sgd_momentum", sgd, fam.sparse_rules, fam.sparse_params)]


def torch_optimizer(spec, params):
    if spec["type"] == "sgd":
        return torch.optim.SGD(params, lr=spec["lr"], momentum=spec["momentum"])
    return torch.optim.AdamW(params, lr=spec["lr"], weight_decay=spec["weight_decay"])


def loss_fn(logits, labels):
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), labels.reshape(-1))


KINKS = {nn.ReLU: (0.0,), nn.ReLU6: (0.0, 6.0), nn.Hardtanh: (-1.0, 1.0)}


def watch_kinks(model, log):
    """Records, per step, activations that sit within float noise of a ReLU kink: there two
    float32 implementations may take different branches and the runs legitimately diverge."""
    def hook(module, inputs, _):
        x = inputs[0].detach()
        points = (module.min_val, module.max_val) if isinstance(module, nn.Hardtanh) else KINKS[type(module)]
        for k in points:
            close = int(((x - k).abs() <= 1e-6 * max(1.0, abs(k))).sum())
            if close:
                log.append(close)
    for m in model.modules():
        if type(m) in KINKS:
            m.register_forward_hook(hook)


def torch_train(fam, state, optimizer, trainable, kink_steps=None):
    model = copy.deepcopy(fam.model)
    model.load_state_dict(state)
    model.train()
    for name, p in model.named_parameters():
        p.requires_grad_(name in trainable)
    # Sparse BP freezes BatchNorm statistics of layers that do not train (recipe:
    # freeze_batchnorm_stats): a BatchNorm whose scale is frozen runs in eval mode, its shift
    # may still train (bias-only rules).
    for module in model.modules():
        if isinstance(module, nn.BatchNorm2d) and not module.weight.requires_grad:
            module.eval()
    opt = torch_optimizer(optimizer, [p for p in model.parameters() if p.requires_grad])
    losses, max_grad, near = [], {}, []
    watch_kinks(model, near)
    for step in range(STEPS):
        inputs, labels = fam.make_batch(step)
        opt.zero_grad()
        near.clear()
        loss = loss_fn(model(*inputs.values()), labels)
        if near and kink_steps is not None:
            kink_steps.append(step + 1)
        loss.backward()
        for n, p in model.named_parameters():
            if p.grad is not None:
                max_grad[n] = max(max_grad.get(n, 0.0), p.grad.abs().max().item())
        opt.step()
        losses.append(loss.item())
    largest = max(max_grad.values())
    noise_only = {n for n, g in max_grad.items() if g <= NOISE_GRAD * largest}
    weights = {n: p.detach().numpy() for n, p in model.named_parameters() if n in trainable and n not in noise_only}
    return losses, weights, noise_only


def pock_train(fam, onnx_path, work, pockc, optimizer, rules):
    batches = [fam.make_batch(step) for step in range(STEPS)]
    arrays = {name: np.concatenate([b[0][name].numpy() for b in batches]) for name in fam.inputs}
    arrays["label"] = np.concatenate([b[1].numpy() for b in batches])
    recipe = {"batch_size": models.BATCH,
              "loss": {"type": "cross_entropy", "logits": "logits", "labels": "label"},
              "optimizer": optimizer}
    if rules is not None:
        recipe["trainable"] = rules
        recipe["freeze_batchnorm_stats"] = True
    return pockc_train(pockc, onnx_path, work, recipe, arrays, STEPS)


def check_train(fam, onnx_path, state, work, pockc):
    report = []
    for name, optimizer, rules, trainable in schemes(fam):
        kinks = []
        want_losses, want_weights, noise_only = torch_train(fam, state, optimizer, trainable, kinks)
        got_losses, got_weights = pock_train(fam, onnx_path, work, pockc, optimizer, rules)
        hint = f" (note: PyTorch had ReLU inputs within 1e-6 of a kink at steps {kinks})" if kinks else ""
        try:
            compare_run(name, got_losses, want_losses, got_weights, want_weights, noise_only, report)
            # Sparse BP must leave every frozen parameter bit-identical.
            for pname, before in state.items():
                if pname in trainable or pname not in got_weights:
                    continue
                if not np.array_equal(got_weights[pname], before.numpy()):
                    raise Mismatch(f"{name}: frozen parameter '{pname}' changed")
        except Mismatch as e:
            raise Mismatch(f"{e}{hint}")
    return "\n    " + "\n    ".join(report)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pockc", required=True, help="path to the pockc binary")
    ap.add_argument("--stage", choices=["infer", "train", "all"], default="all")
    ap.add_argument("--families", default="", help="comma-separated subset (default: all)")
    ap.add_argument("--work", default="", help="keep files here instead of a temporary directory")
    args = ap.parse_args()
    torch.set_num_threads(1)
    warnings.filterwarnings("ignore")  # tracer and export chatter; failures are reported below
    wanted = set(filter(None, args.families.split(",")))
    failures, skipped = [], []
    start = time.time()
    with tempfile.TemporaryDirectory() as tmp:
        root = args.work or tmp
        for fam in models.families():
            if wanted and fam.name not in wanted:
                continue
            for i, opset in enumerate(fam.opsets):
                work = os.path.join(root, f"{fam.name}_opset{opset}")
                os.makedirs(work, exist_ok=True)
                onnx_path = os.path.join(work, "model.onnx")
                label = f"{fam.name} (opset {opset})"
                t0 = time.time()
                try:
                    state = export(fam, opset, onnx_path)
                    if args.stage in ("infer", "all"):
                        err = check_infer(fam, opset, onnx_path, state, work, args.pockc, compressed=i % 2 == 1)
                        print(f"PASS infer {label}: max rel error {err:.2e} ({time.time() - t0:.1f} s)", flush=True)
                    # Symbolic batch / sequence dims: exporters then compute every view's shape
                    # at run time (Shape -> Gather -> Concat), which pock must fold from
                    # --input-shape. Once per family, on the newest opset.
                    if args.stage in ("infer", "all") and i == len(fam.opsets) - 1:
                        dyn_path = os.path.join(work, "model_dynamic.onnx")
                        export(fam, opset, dyn_path, dynamic=True)
                        batch = next(iter(fam.inputs.values())).shape
                        dims = ["--input-shape", f"@batch={batch[0]}"]
                        if any(t.dim() == 2 for t in fam.inputs.values()):
                            dims += ["--input-shape", f"@seq={batch[1]}"]
                        err = check_infer(fam, opset, dyn_path, state, work, args.pockc, False, dims)
                        print(f"PASS infer {label} with symbolic dims: max rel error {err:.2e}", flush=True)
                    # Training is checked once per family, on the newest opset.
                    if args.stage in ("train", "all") and i == len(fam.opsets) - 1:
                        t1 = time.time()
                        summary = check_train(fam, onnx_path, state, work, args.pockc)
                        print(f"PASS train {label}: {summary} ({time.time() - t1:.1f} s)", flush=True)
                except NotBuilt as e:
                    skipped.append(label)
                    print(f"SKIP {label}: {str(e).splitlines()[0]}", flush=True)
                except Mismatch as e:
                    failures.append(label)
                    print(f"FAIL {label}: {e}", flush=True)
    print(f"{len(failures)} failure(s), {len(skipped)} skipped, {time.time() - start:.1f} s")
    if failures:
        return 1
    return SKIP if skipped else 0


if __name__ == "__main__":
    sys.exit(main())
