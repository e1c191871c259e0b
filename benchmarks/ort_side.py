"""ONNX Runtime on-device training side of the benchmark, one job per process (run_bench.py).

  ort_side.py artifacts WORKLOAD SCHEME MODEL.onnx DIR   training artifacts: gradient graph,
                                                         optimizer graph, checkpoint
  ort_side.py train WORKLOAD DIR --threads T --steps N --warmup K
                                                         training steps; prints one JSON line

The artifacts come from the same ONNX file pockc compiles (same weights); the parameters that
train are those of the scheme, every other initializer is frozen. ONNX Runtime's SGD has no
momentum and no partial-channel update (a partially trained weight trains in full).
"""
import argparse
import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

ORT_MAX_IR = 10


def cmd_artifacts(args):
    import onnx
    import torch  # noqa: F401  (onnxruntime.training imports it; the workload definitions need it)
    from onnxruntime.training import artifacts
    import workloads
    import torch_side
    w = workloads.by_name(args.workload)
    scheme = w.scheme(args.scheme)
    model = torch_side.build(w)
    chosen = workloads.trainable(model, scheme)
    params = {n for n, _ in model.named_parameters()}
    m = onnx.load(args.model)
    # ONNX Runtime's LayerNormalization gradient reads the forward's optional Mean and InvStdDev
    # outputs, which PyTorch's export leaves out: name them (the op's own optional outputs).
    for node in m.graph.node:
        if node.op_type == "LayerNormalization" and len(node.output) == 1:
            node.output.extend([node.output[0] + "_mean", node.output[0] + "_inv_std_dev"])
    inits = [i.name for i in m.graph.initializer if i.data_type == onnx.TensorProto.FLOAT]
    requires_grad = [n for n in inits if n in chosen]
    frozen = [n for n in inits if n not in chosen and n in params]
    os.makedirs(args.dir, exist_ok=True)
    t0 = time.perf_counter()
    artifacts.generate_artifacts(m, requires_grad=requires_grad, frozen_params=frozen,
                                 loss=artifacts.LossType.CrossEntropyLoss, optimizer=artifacts.OptimType.SGD,
                                 artifact_directory=args.dir)
    # The onnx package writes its newest IR version into the optimizer graph it builds; this
    # onnxruntime-training (1.19, the last release) reads up to IR 10, which that graph fits.
    for name in ("optimizer_model.onnx", "training_model.onnx", "eval_model.onnx"):
        path = os.path.join(args.dir, name)
        g = onnx.load(path)
        if g.ir_version > ORT_MAX_IR:
            g.ir_version = ORT_MAX_IR
            onnx.save(g, path)
    print(json.dumps({"requires_grad": len(requires_grad), "frozen": len(frozen),
                      "artifacts_s": time.perf_counter() - t0}))


def cmd_train(args):
    import onnxruntime
    from onnxruntime.training.api import CheckpointState, Module, Optimizer
    import workloads
    import torch_side
    rss_mb = torch_side.rss_mb  # the same reading as the PyTorch side
    rss_import = rss_mb()
    w = workloads.by_name(args.workload)
    so = onnxruntime.SessionOptions()
    so.intra_op_num_threads = args.threads
    so.inter_op_num_threads = 1
    state = CheckpointState.load_checkpoint(os.path.join(args.dir, "checkpoint"))
    # No eval model: ONNX Runtime's eval graph of a BatchNorm exported in training form does not
    # load (it keeps the running-statistics outputs), and only training steps are timed.
    module = Module(os.path.join(args.dir, "training_model.onnx"), state, None, device="cpu",
                    session_options=so)
    opt = Optimizer(os.path.join(args.dir, "optimizer_model.onnx"), module)
    opt.set_learning_rate(torch_side.LR)  # as the PyTorch side
    module.train()
    inputs, labels = workloads.make_batch(w, torch_side.BATCH_SEED)
    feed = [t.numpy() for t in inputs.values()] + [labels.numpy().astype(np.int64)]
    rss_model = rss_mb()
    samples, cpu_samples, losses = [], [], []
    for step in range(args.warmup + args.steps):
        t0, c0 = time.perf_counter(), time.process_time()
        loss = module(*feed)
        opt.step()
        module.lazy_reset_grad()
        dt, cpu = (time.perf_counter() - t0) * 1e3, (time.process_time() - c0) * 1e3
        losses.append(float(loss))
        if step >= args.warmup:
            samples.append(dt)
            cpu_samples.append(cpu)
    print(json.dumps({"samples_ms": samples, "cpu_samples_ms": cpu_samples, "losses": losses, "rss_after_import_mb": rss_import,
                      "rss_after_model_mb": rss_model, "peak_rss_mb": rss_mb("VmHWM"),
                      "onnxruntime": onnxruntime.__version__}))


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    a = sub.add_parser("artifacts")
    a.add_argument("workload")
    a.add_argument("scheme", help="a scheme of the workload: full, sparse, sparse-late (CNNs)")
    a.add_argument("model")
    a.add_argument("dir")
    t = sub.add_parser("train")
    t.add_argument("workload")
    t.add_argument("dir")
    t.add_argument("--threads", type=int, default=1)
    t.add_argument("--steps", type=int, default=10)
    t.add_argument("--warmup", type=int, default=2)
    args = ap.parse_args()
    cmd_artifacts(args) if args.cmd == "artifacts" else cmd_train(args)


if __name__ == "__main__":
    main()
