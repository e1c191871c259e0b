#!/usr/bin/env python3
"""ONNX Runtime's inference of `pockc export`'s ONNX against the trained engine's: the model and
training run of export_model.py (a folded BatchNorm, a partial-channel weight, running statistics
that training moves), exported from the checkpoint, then run by onnxruntime on the same inputs.
Prints the max abs difference; fails above 1e-4 or when training left the outputs unchanged.

Usage: check_export_ort.py --pockc PATH [--venv DIR]. Needs numpy, onnx, torch (to build the
model) and onnxruntime, which no Debian package has: run by a python without it, the script runs
itself again under DIR's python (BUILD/ort-venv, made by scripts/prepare-test-venvs.sh), and
exits 77 (skipped), saying why, when that cannot import it either.
"""
import argparse
import os
import sys
import tempfile
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from venv_reexec import SKIP, reexec_in_venv  # noqa: E402

TOL = 1e-4


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pockc", required=True)
    ap.add_argument("--venv", default="", help="a venv with onnxruntime to run under")
    args = ap.parse_args()
    reexec_in_venv(args.venv, ("onnxruntime",), "scripts/prepare-test-venvs.sh BUILD_DIR")
    try:
        import numpy as np
        import onnxruntime as ort
        import torch  # noqa: F401  (export_model builds the model with it)
    except ImportError as e:
        print(f"SKIP: {e}")
        return SKIP
    import export_model as em

    def ort_logits(path, x):
        session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
        return np.concatenate([session.run(["logits"], {"x": x[i:i + em.BATCH]})[0]
                               for i in range(0, len(x), em.BATCH)])

    pockc = args.pockc
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
