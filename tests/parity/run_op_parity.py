#!/usr/bin/python3
"""PyTorch <-> PockEngine parity of the ONNX ops issue 17 added, through ONNX and pockc: the
models of op_models.py, checked as run_parity.py checks the five model families (inference
against PyTorch's eval outputs; training step by step against PyTorch with SGD-momentum, AdamW
and a sparse scheme). Runs under Debian's /usr/bin/python3 (python3-torch, python3-onnx).

Exit status: 0 all passed, 1 a mismatch or error, 77 (ctest SKIP) without torch / onnx.
"""
import argparse
import os
import sys
import tempfile
import time
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run_parity  # noqa: E402  (exits 77 itself when torch or onnx is missing)
import op_models  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pockc", required=True, help="path to the pockc binary")
    ap.add_argument("--families", default="", help="comma-separated subset (default: all)")
    ap.add_argument("--work", default="", help="keep files here instead of a temporary directory")
    args = ap.parse_args()
    run_parity.torch.set_num_threads(1)
    warnings.filterwarnings("ignore")
    wanted = set(filter(None, args.families.split(",")))
    failures = []
    start = time.time()
    with tempfile.TemporaryDirectory() as tmp:
        for fam in op_models.families():
            if wanted and fam.name not in wanted:
                continue
            opset = fam.opsets[-1]
            work = os.path.join(args.work or tmp, fam.name)
            os.makedirs(work, exist_ok=True)
            onnx_path = os.path.join(work, "model.onnx")
            try:
                state = run_parity.export(fam, opset, onnx_path)
                err = run_parity.check_infer(fam, opset, onnx_path, state, work, args.pockc, compressed=False)
                print(f"PASS infer {fam.name}: max rel error {err:.2e}", flush=True)
                summary = run_parity.check_train(fam, onnx_path, state, work, args.pockc)
                print(f"PASS train {fam.name}: {summary}", flush=True)
            except (run_parity.Mismatch, run_parity.NotBuilt) as e:
                failures.append(fam.name)
                print(f"FAIL {fam.name}: {e}", flush=True)
    print(f"{len(failures)} failure(s), {time.time() - start:.1f} s")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
