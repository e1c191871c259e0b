#!/usr/bin/python3
"""pockc's command line: help texts, errors that say what to do, .npz in and out (NumPy is the
independent reader and writer), batching over many samples, and resuming from a checkpoint.

Usage: test_pockc_cli.py --pockc PATH. Exit 0 passed, 1 failed, 77 skipped (no torch/onnx).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import warnings

try:
    import numpy as np
    import torch
    import torch.nn as nn
except ImportError as e:
    print(f"SKIP: {e}")
    sys.exit(77)

FAILURES = []


def check(cond, what):
    print(("PASS " if cond else "FAIL ") + what, flush=True)
    if not cond:
        FAILURES.append(what)


def pockc(*args):
    p = subprocess.run([POCKC, *args], capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


class Mlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(6, 8)
        self.fc2 = nn.Linear(8, 3)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


def main():
    global POCKC
    ap = argparse.ArgumentParser()
    ap.add_argument("--pockc", required=True)
    POCKC = ap.parse_args().pockc
    warnings.filterwarnings("ignore")
    torch.manual_seed(0)
    model = Mlp()
    batch = 4
    with tempfile.TemporaryDirectory() as d:
        onnx_path = os.path.join(d, "mlp.onnx")
        torch.onnx.export(model, (torch.zeros(batch, 6),), onnx_path, input_names=["x"], output_names=["logits"],
                          opset_version=17, do_constant_folding=False, training=torch.onnx.TrainingMode.TRAINING)
        infer_blob = os.path.join(d, "mlp_infer.pock")

        for cmd in ([], ["compile"], ["infer"], ["train"]):
            rc, out = pockc(*cmd, "--help")
            check(rc == 0 and "usage: pockc" in out, f"pockc {' '.join(cmd)} --help")
        rc, out = pockc("frobnicate")
        check(rc == 2 and "unknown command" in out and "--help" in out, "an unknown command is named")
        rc, out = pockc("compile", onnx_path)
        check(rc == 2 and "--output" in out, "compile without -o asks for it")
        rc, out = pockc("compile", onnx_path, "-o", infer_blob, "--input-shape", "nope=1,6")
        check(rc != 0 and "'nope'" in out, "--input-shape for an unknown input is refused")
        rc, out = pockc("compile", onnx_path, "-o", infer_blob)
        check(rc == 0 and os.path.exists(infer_blob), "compile writes an inference blob")

        # 3 batches of samples, compressed input: outputs come back concatenated in sample order.
        x = np.random.default_rng(0).standard_normal((3 * batch, 6)).astype(np.float32)
        data = os.path.join(d, "x.npz")
        np.savez_compressed(data, x=x)
        out_path = os.path.join(d, "y.npz")
        rc, out = pockc("infer", infer_blob, "--data", data, "--out", out_path)
        with torch.no_grad():
            want = model.eval()(torch.from_numpy(x)).numpy()
        ok = rc == 0 and np.abs(np.load(out_path)["logits"] - want).max() <= 1e-5 * np.abs(want).max()
        check(ok, "infer over 3 batches of a savez_compressed file matches PyTorch in order")

        np.savez(data, x=x[: batch + 1])
        rc, out = pockc("infer", infer_blob, "--data", data, "--out", out_path)
        check(rc != 0 and "multiple of the compiled batch" in out, "a sample count that is no multiple of the batch")
        np.savez(data, inputs=x)
        rc, out = pockc("infer", infer_blob, "--data", data, "--out", out_path)
        check(rc != 0 and "'x'" in out and "inputs" in out, "a missing array is named, with what the file has")
        np.savez(data, x=x[:, :5])
        rc, out = pockc("infer", infer_blob, "--data", data, "--out", out_path)
        check(rc != 0 and "[N, 6]" in out, "a wrong per-sample shape says the expected one")
        np.savez(data, x=x)
        rc, out = pockc("train", infer_blob, "--data", data, "--steps", "1")
        check(rc != 0 and "--recipe" in out, "training an inference blob says to recompile with a recipe")

        recipe = os.path.join(d, "recipe.json")
        with open(recipe, "w") as f:
            json.dump({"batch_size": batch, "loss": {"type": "cross_entropy", "logits": "logits", "labels": "label"},
                       "optimizer": {"type": "sgd", "lr": 0.1, "momentum": 0.9}}, f)
        train_blob = os.path.join(d, "mlp_train.pock")
        rc, out = pockc("compile", onnx_path, "--recipe", recipe, "-o", train_blob)
        if rc != 0 and "not built yet" in out:
            print("SKIP training checks: " + out.strip().splitlines()[0])
        else:
            check(rc == 0, "compile with a recipe")
            labels = np.arange(3 * batch) % 3
            np.savez(data, x=x, label=labels)
            log_a, log_b = os.path.join(d, "a.jsonl"), os.path.join(d, "b.jsonl")
            ckpt = os.path.join(d, "mlp.ckpt")
            rc, out = pockc("train", train_blob, "--data", data, "--steps", "5", "--log", log_a)
            check(rc == 0 and out.count("loss") >= 5, "train prints each step's loss")
            rc1, _ = pockc("train", train_blob, "--data", data, "--steps", "2", "--checkpoint", ckpt)
            rc2, _ = pockc("train", train_blob, "--data", data, "--steps", "3", "--resume", ckpt, "--log", log_b)
            straight = [json.loads(line)["loss"] for line in open(log_a)]
            resumed = [json.loads(line)["loss"] for line in open(log_b)] if rc1 == 0 and rc2 == 0 else []
            check(resumed == straight[2:], "resuming from a checkpoint continues the same losses and batches")
            w = os.path.join(d, "w.npz")
            rc, _ = pockc("train", train_blob, "--data", data, "--steps", "1", "--save-weights", w)
            check(rc == 0 and set(np.load(w).files) == {"fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"},
                  "--save-weights writes every parameter by its ONNX name")
            np.savez(data, x=x)
            rc, out = pockc("train", train_blob, "--data", data, "--steps", "1")
            check(rc != 0 and "'label'" in out, "missing labels are named")
    print(f"{len(FAILURES)} failure(s)")
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
