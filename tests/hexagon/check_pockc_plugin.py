#!/usr/bin/env python3
"""pockc with the Hexagon plugin from the command line: compile an ONNX MLP placing ops on the
DSP, inspect shows them and the plugin's memory, train runs the steps there and the loss falls.
Exit 77 (skipped, with a message) when the DSP program was not built."""
import argparse
import os
import re
import subprocess
import sys
import tempfile

try:
    import numpy as np
    import onnx
    from onnx import TensorProto, helper
except ImportError as e:
    print(f"SKIPPED: needs numpy and onnx under {sys.executable} ({e})")
    sys.exit(77)


def run(*args):
    p = subprocess.run(args, capture_output=True, text=True)
    if p.returncode != 0:
        print(p.stdout + p.stderr)
        sys.exit(f"FAILED: {' '.join(args)} exited {p.returncode}")
    return p.stdout + p.stderr


def mlp_model(path):
    rng = np.random.RandomState(0)
    w1 = helper.make_tensor("w1", TensorProto.FLOAT, [16, 4], rng.uniform(-0.5, 0.5, 64).astype(np.float32))
    b1 = helper.make_tensor("b1", TensorProto.FLOAT, [16], np.zeros(16, np.float32))
    w2 = helper.make_tensor("w2", TensorProto.FLOAT, [3, 16], rng.uniform(-0.25, 0.25, 48).astype(np.float32))
    b2 = helper.make_tensor("b2", TensorProto.FLOAT, [3], np.zeros(3, np.float32))
    nodes = [helper.make_node("Gemm", ["x", "w1", "b1"], ["h"], transB=1, name="fc1"),
             helper.make_node("Relu", ["h"], ["r"]),
             helper.make_node("Gemm", ["r", "w2", "b2"], ["logits"], transB=1, name="fc2")]
    graph = helper.make_graph(nodes, "mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [8, 4])],
                              [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [8, 3])], [w1, b1, w2, b2])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)


def write_mlp_task(d):
    """The ONNX MLP, 64 points of three labelled blobs and an Adam recipe, written in folder d."""
    model, data, recipe = (os.path.join(d, n) for n in ("mlp.onnx", "data.npz", "recipe.json"))
    mlp_model(model)
    rng = np.random.RandomState(1)
    centres = np.array([[2, 0, 0, -1], [-2, 1, 0, 1], [0, -2, 2, 0]], np.float32)
    label = rng.randint(0, 3, 64).astype(np.int64)
    np.savez(data, x=(centres[label] + 0.5 * rng.randn(64, 4)).astype(np.float32), label=label)
    with open(recipe, "w") as f:
        f.write('{"loss": {"type": "cross_entropy", "logits": "logits"}, "optimizer": {"type": "adam", "lr": 0.02}}')
    return model, data, recipe


def losses(train_output):
    """The per-step losses `pockc train` printed."""
    return [float(v) for v in re.findall(r"loss ([0-9.eE+-]+)", train_output)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pockc", required=True)
    ap.add_argument("--plugin", required=True)
    ap.add_argument("--have-dsp", type=int, required=True)
    a = ap.parse_args()
    if not a.have_dsp:
        print("SKIPPED: the Hexagon DSP program is not built (clang-14, ld.lld, qemu-hexagon; docs/hexagon.md)")
        sys.exit(77)
    with tempfile.TemporaryDirectory() as d:
        model, data, recipe = write_mlp_task(d)
        blob = os.path.join(d, "mlp.pock")
        plugin = ["--backend-plugin", a.plugin]
        run(a.pockc, "compile", model, "--recipe", recipe, "-o", blob, *plugin)
        inspect = run(a.pockc, "inspect", blob, *plugin)
        placed = re.search(r"the blob prefers .*hexagon x(\d+)", inspect)
        if not placed or int(placed.group(1)) < 10:
            print(inspect)
            sys.exit("FAILED: inspect does not show the ops placed on hexagon")
        if "backend hexagon (" not in inspect or "memory of hexagon" not in inspect:
            print(inspect)
            sys.exit("FAILED: inspect does not show the plugin loaded and its memory")
        train = run(a.pockc, "train", blob, "--data", data, "--steps", "24", "--shuffle", "3", *plugin)
        seen = losses(train)
        if len(seen) < 2 or not seen[-1] < seen[0]:
            print(train)
            sys.exit("FAILED: training with the plugin did not lower the loss")
        print(f"PASS: {placed.group(1)} ops placed on hexagon; loss {seen[0]:.4f} -> {seen[-1]:.4f} over 24 steps")


if __name__ == "__main__":
    main()
