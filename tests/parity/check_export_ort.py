#!/usr/bin/env python3
"""ONNX Runtime's inference of `pockc export`'s ONNX against the trained engine's: the model and
training run of export_model.py (a folded BatchNorm, a partial-channel weight, running statistics
that training moves), exported from the checkpoint, then run by onnxruntime on the same inputs.
Prints the max abs difference; fails above 1e-4 or when training left the outputs unchanged.

Usage: check_export_ort.py --pockc PATH. Needs numpy, onnx, torch (to build the model) and
onnxruntime; exit 77 (skipped) naming what is missing. The ctest case runs it with
POCK_ORT_PYTHON (a python that has onnxruntime, e.g. the venv of benchmarks/prepare_python.sh).
"""
import argparse
import os
import sys
import tempfile
import warnings

try:
    import numpy as np
    import onnxruntime as ort
    import torch  # noqa: F401  (export_model builds the model with it)
except ImportError as e:
    print(f"SKIP: {e} (run with a python that has onnxruntime: cmake -DPOCK_ORT_PYTHON=...)")
    sys.exit(77)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import export_model as em  # noqa: E402

TOL = 1e-4


def ort_logits(path, x):
    session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    return np.concatenate([session.run(["logits"], {"x": x[i:i + em.BATCH]})[0] for i in range(0, len(x), em.BATCH)])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pockc", required=True)
    pockc = ap.parse_args().pockc
    warnings.filterwarnings("ignore")
    with tempfile.TemporaryDirectory() as d:
        source = os.path.join(d, "net.onnx")
        em.export_torch_model(em.build_torch_model(), source)
        f, _ = em.train_and_export(pockc, source, d)
        x = np.load(f["x"])["x"]
        trained = np.load(f["pock_out"])["logits"]
        exported = float(np.abs(ort_logits(f["export"], x) - trained).max())
        untrained = float(np.abs(ort_logits(source, x) - trained).max())
    print(f"onnxruntime {ort.__version__}: export vs pock's trained engine, max abs diff {exported:.3g} "
          f"(source model vs trained: {untrained:.3g})")
    if exported > TOL or untrained <= 100 * TOL:
        print("FAIL")
        return 1
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
