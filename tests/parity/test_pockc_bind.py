#!/usr/bin/python3
"""pockc compile --bind: a Reshape whose target shape is a graph input compiles once the input is
bound (as text or from a .npy file) and infers as NumPy reshapes; bindings that name no input or
disagree with the declared type are refused by name, and the refusal without a binding says how.

Usage: test_pockc_bind.py --pockc PATH. Exit 0 passed, 1 failed, 77 skipped (no numpy/onnx).
"""
import argparse
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
    import onnx
    from onnx import TensorProto, helper
except ImportError as e:
    print(f"SKIP: {e}")
    sys.exit(77)

FAILURES = []


def check(cond, what, out=""):
    print(("PASS " if cond else "FAIL ") + what + ("" if cond else f"\n  pockc said: {out.strip()}"), flush=True)
    if not cond:
        FAILURES.append(what)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pockc", required=True)
    pockc_path = ap.parse_args().pockc

    def pockc(*args):
        p = subprocess.run([pockc_path, *args], capture_output=True, text=True)
        return p.returncode, p.stdout + p.stderr

    graph = helper.make_graph(
        [helper.make_node("Reshape", ["x", "target"], ["y"], name="view")], "bind",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 6]),
         helper.make_tensor_value_info("target", TensorProto.INT64, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "reshape.onnx")
        onnx.save(model, path)
        blob = os.path.join(d, "reshape.pock")
        x = np.arange(12, dtype=np.float32).reshape(2, 6)
        data = os.path.join(d, "x.npz")
        np.savez(data, x=x)
        out_path = os.path.join(d, "y.npz")

        rc, out = pockc("compile", "--help")
        check(rc == 0 and "--bind NAME=v0,v1,..." in out and "@values.npy" in out, "compile --help shows --bind", out)
        rc, out = pockc("compile", path, "-o", blob)
        check(rc != 0 and "'target'" in out and "--bind target=" in out, "an unbound shape input asks for --bind", out)

        shape_npy = os.path.join(d, "shape.npy")
        np.save(shape_npy, np.array([3, 4], dtype=np.int64))
        for form, arg in (("text", "target=3,4"), (".npy", "target=@" + shape_npy)):
            rc, out = pockc("compile", path, "-o", blob, "--bind", arg)
            check(rc == 0, f"compile with --bind in {form} form", out)
            rc, out = pockc("infer", blob, "--data", data, "--out", out_path)
            ok = rc == 0 and np.array_equal(np.load(out_path)["y"], x.reshape(3, 4))
            check(ok, f"the blob bound in {form} form infers as NumPy's reshape to [3, 4]", out)

        int32_npy = os.path.join(d, "shape32.npy")
        np.save(int32_npy, np.array([3, 4], dtype=np.int32))
        rc, out = pockc("compile", path, "-o", blob, "--bind", "target=@" + int32_npy)
        check(rc != 0 and "the value is i32, but the model declares the input i64" in out, "a wrong dtype is refused", out)
        rc, out = pockc("compile", path, "-o", blob, "--bind", "target=3,2,2")
        check(rc != 0 and "shape [3], but the model declares the input [2]" in out, "a wrong shape is refused", out)
        rc, out = pockc("compile", path, "-o", blob, "--bind", "target=3,4", "--bind", "shape=3,4")
        check(rc != 0 and "'shape', which is not an input" in out, "a name that is no input is refused", out)
        rc, out = pockc("compile", path, "-o", blob, "--bind", "target=@" + os.path.join(d, "missing.npy"))
        check(rc != 0 and "cannot open" in out, "a missing .npy file is named", out)
    if FAILURES:
        print(f"{len(FAILURES)} check(s) failed")
        return 1
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
