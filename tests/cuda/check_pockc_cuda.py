#!/usr/bin/env python3
"""pockc with the cuda backend from the command line: `compile --backend cuda` places an ONNX MLP's
ops on cuda (on any machine: supports_op needs no GPU), a compile without it places none there,
inspect shows the cuda memory space, and `train` either lowers the loss on the GPU or, without
one, refuses to open the blob, naming the reason. Exit 77 (skipped) without numpy and onnx."""
import argparse
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "hexagon"))
try:
    from check_pockc_plugin import losses, write_mlp_task  # the task the plugin check trains
except ImportError as e:
    print(f"SKIPPED: needs numpy and onnx under {sys.executable} ({e})")
    sys.exit(77)


def run(*args, ok=True):
    p = subprocess.run(args, capture_output=True, text=True)
    if ok and p.returncode != 0:
        print(p.stdout + p.stderr)
        sys.exit(f"FAILED: {' '.join(args)} exited {p.returncode}")
    return p.returncode, p.stdout + p.stderr


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pockc", required=True)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        model, data, recipe = write_mlp_task(d)
        host, cuda = os.path.join(d, "host.pock"), os.path.join(d, "cuda.pock")
        run(a.pockc, "compile", model, "--recipe", recipe, "-o", host)
        run(a.pockc, "compile", model, "--recipe", recipe, "-o", cuda, "--backend", "cuda")
        _, host_inspect = run(a.pockc, "inspect", host)
        if "cuda x" in host_inspect:
            print(host_inspect)
            sys.exit("FAILED: a compile without --backend cuda placed ops on cuda")
        _, inspect = run(a.pockc, "inspect", cuda)
        placed = re.search(r"the blob prefers .*cuda x(\d+)", inspect)
        if not placed or int(placed.group(1)) < 10:
            print(inspect)
            sys.exit("FAILED: inspect does not show the ops placed on cuda")

        code, train = run(a.pockc, "train", cuda, "--data", data, "--steps", "24", "--shuffle", "3", ok=False)
        if code != 0:
            if "cuda: no usable GPU" not in train:
                print(train)
                sys.exit("FAILED: train failed, and not for want of a GPU")
            print(f"PASS: {placed.group(1)} ops placed on cuda; no GPU here, and train says so: "
                  f"{train.strip().splitlines()[-1][:160]}")
            return
        seen = losses(train)
        if len(seen) < 2 or not seen[-1] < seen[0]:
            print(train)
            sys.exit("FAILED: training on cuda did not lower the loss")
        print(f"PASS: {placed.group(1)} ops placed on cuda; loss {seen[0]:.4f} -> {seen[-1]:.4f} over 24 steps")


if __name__ == "__main__":
    main()
