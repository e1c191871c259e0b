"""PyTorch side of the benchmark, one job per process (run_bench.py starts it).

  torch_side.py export WORKLOAD DIR   ONNX files for pockc (and ONNX Runtime) from the seeded model,
                                      and the batch (batch.npz) every side trains on
  torch_side.py train WORKLOAD SCHEME --threads T --steps N --warmup K [--autocast-bf16]
                                      eager training steps; prints one JSON line. --autocast-bf16:
                                      forward and loss under torch.autocast("cpu", bfloat16)
                                      (PyTorch's own bf16 scheme: f32 master weights)
  torch_side.py check-loss WORKLOAD   each scheme's first loss with Dropout off (the reference the
                                      TensorFlow side must match: its Dropout masks differ)

Both build the model from the same seed, so the weights in the ONNX file and those the eager
loop trains are the same; each prints a checksum of them and run_bench.py compares the two.
"""
import argparse
import copy
import json
import os
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import workloads  # noqa: E402
from proc_status import rss_mb  # noqa: E402  (ort_side.py reads it as torch_side.rss_mb)

SEED = 0
BATCH_SEED = 1
LR = 1e-3        # SGD with momentum on both sides; the value does not change the work


def build(w):
    torch.manual_seed(SEED)
    return w.build()


def checksum(state):
    """Sum of |value| over every float tensor, unique by storage (a tied embedding counts once)."""
    seen, total = set(), 0.0
    for name, t in state.items():
        if not t.is_floating_point():
            continue
        key = (t.data_ptr(), tuple(t.shape))
        if key in seen:
            continue
        seen.add(key)
        total += float(t.detach().double().abs().sum())
    return total


def export_onnx(model, w, path, training):
    kwargs = dict(input_names=list(w.input_shapes), output_names=["logits"], opset_version=17,
                  do_constant_folding=False, training=training)
    # PyTorch 2.x defaults to the dynamo exporter; docs/exporting.md's route is TorchScript's.
    import inspect
    if "dynamo" in inspect.signature(torch.onnx.export).parameters:
        kwargs["dynamo"] = False
    inputs, _ = workloads.make_batch(w, BATCH_SEED)
    torch.onnx.export(model, tuple(inputs.values()), path, **kwargs)


def restore_state(path, state):
    """Tracing in training mode runs each BatchNorm once and moves its running statistics: write
    the model's own values back so that the file holds exactly the seeded weights."""
    import onnx
    from onnx import numpy_helper
    m = onnx.load(path)
    changed = 0
    for i, init in enumerate(m.graph.initializer):
        if init.name in state and ("running_" in init.name or "num_batches" in init.name):
            arr = state[init.name].numpy()
            m.graph.initializer[i].CopyFrom(numpy_helper.from_array(arr.astype(numpy_helper.to_array(init).dtype),
                                                                    init.name))
            changed += 1
    if changed:
        onnx.save(m, path)
    return m


def file_checksum(m, state):
    """Checksum of the ONNX initializers that are model parameters or buffers, and the names of
    model parameters missing from the file (other than tied aliases)."""
    from onnx import numpy_helper
    inits = {i.name: i for i in m.graph.initializer}
    total, present = 0.0, set()
    for name, init in inits.items():
        if name in state and state[name].is_floating_point():
            total += float(abs(numpy_helper.to_array(init).astype("float64")).sum())
            present.add(name)
    return total, present


def cmd_export(args):
    w = workloads.by_name(args.workload)
    model = build(w)
    state = copy.deepcopy(model.state_dict())
    out = {"torch": torch.__version__}
    path = os.path.join(args.dir, "model.onnx")
    t0 = time.perf_counter()
    model.train()
    export_onnx(model, w, path, torch.onnx.TrainingMode.TRAINING)
    m = restore_state(path, state)
    total, present = file_checksum(m, state)
    # A parameter missing from the file must be the alias of one that is there (tied weights).
    ptrs = {t.data_ptr() for n, t in model.state_dict().items() if n in present}
    missing = [n for n, p in model.named_parameters() if n not in present and p.data_ptr() not in ptrs]
    if missing:
        raise SystemExit(f"the export renamed or folded parameters: {missing[:5]}")
    out.update(onnx=path, checksum=total, export_s=time.perf_counter() - t0,
               initializers=sorted(present))
    # The batch every side trains on, for pockc train (arrays named like the model's inputs).
    import numpy as np
    inputs, labels = workloads.make_batch(w, BATCH_SEED)
    np.savez(os.path.join(args.dir, "batch.npz"), label=labels.numpy(), **{k: v.numpy() for k, v in inputs.items()})
    if args.ort_sparse:
        # ONNX Runtime has no freeze_batchnorm_stats: each such sparse scheme's model is exported
        # with its frozen BatchNorms already in inference form (PRESERVE keeps each module's mode).
        out["onnx_ort"] = {}
        for scheme in w.schemes().values():
            if not scheme.freeze_bn_stats:
                continue
            model.load_state_dict(state)
            model.train()
            chosen = workloads.trainable(model, scheme)
            for bn in workloads.frozen_bn_modules(model, chosen):
                bn.eval()
            ort_path = os.path.join(args.dir, f"model_ort_{scheme.name}.onnx")
            export_onnx(model, w, ort_path, torch.onnx.TrainingMode.PRESERVE)
            restore_state(ort_path, state)
            out["onnx_ort"][scheme.name] = ort_path
    print(json.dumps(out))


def prepare_training(model, scheme):
    """Train mode with the scheme's parameters trainable; returns (trainable params, masked weights)."""
    model.train()
    chosen = workloads.trainable(model, scheme)
    masked = 0
    for name, p in model.named_parameters():
        p.requires_grad_(name in chosen)
        rows = chosen.get(name)
        if rows is not None and rows < p.shape[0]:
            # PyTorch has no partial-channel update: the full weight gradient is computed and
            # the rows the scheme leaves frozen are zeroed, so SGD leaves them unchanged.
            mask = torch.zeros_like(p)
            mask[:rows] = 1
            p.register_hook(lambda g, mask=mask: g * mask)
            masked += 1
    if scheme.freeze_bn_stats:
        for bn in workloads.frozen_bn_modules(model, chosen):
            bn.eval()
    return [p for p in model.parameters() if p.requires_grad], masked


def cmd_train(args):
    torch.set_num_threads(args.threads)
    rss_import = rss_mb()
    w = workloads.by_name(args.workload)
    scheme = w.scheme(args.scheme)
    model = build(w)
    sum_before = checksum(model.state_dict())
    params, masked = prepare_training(model, scheme)
    opt = torch.optim.SGD(params, lr=LR, momentum=0.9)
    inputs, labels = workloads.make_batch(w, BATCH_SEED)
    rss_model = rss_mb()
    samples, cpu_samples, losses = [], [], []
    for step in range(args.warmup + args.steps):
        t0, c0 = time.perf_counter(), time.process_time()
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=args.autocast_bf16):
            logits = model(*inputs.values())
            loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]).float(), labels.reshape(-1))
        loss.backward()
        opt.step()
        dt, cpu = (time.perf_counter() - t0) * 1e3, (time.process_time() - c0) * 1e3
        losses.append(loss.detach().item())
        if step >= args.warmup:
            samples.append(dt)
            cpu_samples.append(cpu)
    print(json.dumps({"samples_ms": samples, "cpu_samples_ms": cpu_samples, "losses": losses, "checksum": sum_before,
                      "trainable_params": sum(p.numel() for p in params), "masked_weights": masked,
                      "rss_after_import_mb": rss_import, "rss_after_model_mb": rss_model,
                      "peak_rss_mb": rss_mb("VmHWM"), "threads": torch.get_num_threads(),
                      "torch": torch.__version__}))


def cmd_check_loss(args):
    w = workloads.by_name(args.workload)
    inputs, labels = workloads.make_batch(w, BATCH_SEED)
    out = {}
    for scheme in w.schemes().values():
        model = build(w)
        prepare_training(model, scheme)
        for m in model.modules():
            if isinstance(m, torch.nn.Dropout):
                m.eval()
        with torch.no_grad():
            logits = model(*inputs.values())
        out[scheme.name] = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), labels.reshape(-1)).item()
    print(json.dumps(out))


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    e = sub.add_parser("export")
    e.add_argument("workload")
    e.add_argument("dir")
    e.add_argument("--ort-sparse", action="store_true")
    t = sub.add_parser("train")
    t.add_argument("workload")
    t.add_argument("scheme", help="a scheme of the workload: full, sparse, sparse-late (CNNs)")
    t.add_argument("--threads", type=int, default=1)
    t.add_argument("--steps", type=int, default=10)
    t.add_argument("--warmup", type=int, default=2)
    t.add_argument("--autocast-bf16", action="store_true")
    c = sub.add_parser("check-loss")
    c.add_argument("workload")
    args = ap.parse_args()
    {"export": cmd_export, "train": cmd_train, "check-loss": cmd_check_loss}[args.cmd](args)


if __name__ == "__main__":
    main()
