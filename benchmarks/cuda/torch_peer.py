"""PyTorch on the same GPU as PockEngine's cuda backend: the peer of benchmarks/cuda/check.sh.

  torch_peer.py train WORKLOAD SCHEME --steps N --warmup K [--tf32]
      eager training steps of benchmarks/workloads.py's seeded model on torch.device("cuda"),
      SGD with momentum as benchmarks/torch_side.py, on the batch torch_side.py export writes;
      prints one JSON line: samples_ms (per step, after torch.cuda.synchronize), losses, device.

First run on an H200 on 2026-12-04 (benchmarks/RESULTS.md).
TF32 is off unless --tf32, as PockEngine's cuda GEMMs are exact f32 unless POCK_CUDA_TF32=1.
"""
import argparse
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))  # benchmarks/: workloads.py, torch_side.py


def cmd_train(args):
    import torch
    import torch.nn.functional as F
    import torch_side
    import workloads

    if not torch.cuda.is_available():
        raise SystemExit("torch_peer: torch.cuda.is_available() is False")
    torch.backends.cuda.matmul.allow_tf32 = args.tf32
    torch.backends.cudnn.allow_tf32 = args.tf32
    dev = torch.device("cuda")
    w = workloads.by_name(args.workload)
    scheme = w.scheme(args.scheme)
    model = torch_side.build(w).to(dev)  # first: the partial-channel masks are made like the weights
    params, _ = torch_side.prepare_training(model, scheme)
    opt = torch.optim.SGD(params, lr=torch_side.LR, momentum=0.9)
    inputs, labels = workloads.make_batch(w, torch_side.BATCH_SEED)
    inputs = {k: v.to(dev) for k, v in inputs.items()}
    labels = labels.to(dev)
    samples, losses = [], []
    torch.cuda.reset_peak_memory_stats()
    for step in range(args.warmup + args.steps):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=args.autocast_bf16):
            logits = model(*inputs.values())
        loss = F.cross_entropy(logits.float().reshape(-1, logits.shape[-1]), labels.reshape(-1))
        loss.backward()
        opt.step()
        losses.append(loss.detach().item())  # waits for the step, as pockc train's loss read does
        torch.cuda.synchronize()
        if step >= args.warmup:
            samples.append((time.perf_counter() - t0) * 1e3)
    # The caching allocator's peak over the steps: tensors only, as PockEngine's planned device
    # bytes are (neither side counts the CUDA context).
    print(json.dumps({"samples_ms": samples, "losses": losses, "device": torch.cuda.get_device_name(0),
                      "torch": torch.__version__, "tf32": args.tf32, "autocast_bf16": args.autocast_bf16,
                      "peak_device_bytes": torch.cuda.max_memory_allocated()}))


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    t = sub.add_parser("train")
    t.add_argument("workload")
    t.add_argument("scheme")
    t.add_argument("--steps", type=int, default=20)
    t.add_argument("--warmup", type=int, default=3)
    t.add_argument("--tf32", action="store_true")
    t.add_argument("--autocast-bf16", action="store_true",
                   help="forward under torch.autocast to bf16 (the peer of recipe precision bf16)")
    args = ap.parse_args()
    cmd_train(args)


if __name__ == "__main__":
    main()
