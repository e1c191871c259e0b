#!/usr/bin/env python3
"""Tokenizer speed, side by side on the same text: pock::Tokenizer (`pockc tokenize --time`, the
encode loop alone, vocabulary load excluded) against Hugging Face's `tokenizers` (the Rust
tokenizer transformers builds from the same GGUF, SmolLM2's digit split restored; one thread,
a fresh tokenizer per repetition so that its word cache starts cold as ours does) and llama.cpp's
(llama-cpp-python, one call per text). The text: every fortune of the files Debian's `fortunes`
and `fortunes-min` install, one text per fortune. Throughput is tokens per second of CPU time
(the machine may be shared), best of --repeat runs; all sides must give the same token count.
    python benchmarks/tokenizer_bench.py --pockc build/pockc [--repeat 3]"""
import argparse
import glob
import os
import re
import subprocess
import sys
import tempfile
import time

os.environ["TOKENIZERS_PARALLELISM"] = "false"  # one thread, as pockc
os.environ["RAYON_NUM_THREADS"] = "1"
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "text"))
import tokenizer_oracles as oracles  # noqa: E402


def cpu_name():
    out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
    m = re.search(r"Model name:\s*(.+)", out)
    return m.group(1).strip() if m else "unknown CPU"


def timed(fn, repeat):
    best, result = None, None
    for _ in range(repeat):
        start = time.process_time()
        result = fn()
        spent = time.process_time() - start
        best = spent if best is None else min(best, spent)
    return best, result


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pockc", required=True, help="the pockc binary to time")
    ap.add_argument("--repeat", type=int, default=3, help="runs per tokenizer; the fastest counts")
    a = ap.parse_args()
    texts = []
    for f in sorted(glob.glob("/usr/share/games/fortunes/*")):
        if os.path.isfile(f) and not f.endswith((".dat", ".u8")):
            texts += [t for t in open(f, encoding="utf-8").read().split("\n%\n") if t]
    encoded = [t.encode() for t in texts]
    size = sum(map(len, encoded))
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        model = os.path.join(tmp, "smollm2_tokenizer.gguf")
        oracles.write_tokenizer_gguf(model)
        corpus = os.path.join(tmp, "corpus.txt")
        with open(corpus, "wb") as f:
            f.write(b"\0".join(encoded))
        ours = []
        for _ in range(a.repeat):
            r = subprocess.run([a.pockc, "tokenize", model, "--file", corpus, "--nul", "--time"], check=True,
                               capture_output=True, text=True)
            m = re.search(r"(\d+) tokens in [\d.]+ s wall, ([\d.]+) s CPU", r.stderr)
            ours.append((float(m.group(2)), int(m.group(1))))
        seconds, tokens = min(ours)
        rows.append(("pock::Tokenizer (pockc tokenize)", seconds, tokens))

        from tokenizers import Tokenizer
        serialized = oracles.hugging_face("smollm").backend_tokenizer.to_str()

        def hf_batch():
            tok = Tokenizer.from_str(serialized)
            return sum(len(e.ids) for e in tok.encode_batch(texts, add_special_tokens=False))

        def hf_each():
            tok = Tokenizer.from_str(serialized)
            return sum(len(tok.encode(t, add_special_tokens=False).ids) for t in texts)

        rows.append(("tokenizers encode_batch, 1 thread", *timed(hf_batch, a.repeat)))
        rows.append(("tokenizers encode, one call per text", *timed(hf_each, a.repeat)))
        cpp = oracles.llama_cpp(model)
        rows.append(("llama.cpp tokenize, one call per text", *timed(
            lambda: sum(len(cpp.tokenize(b, add_bos=False, special=True)) for b in encoded), a.repeat)))
    print(f"{cpu_name()}; {len(texts)} fortunes, {size / 1e6:.2f} MB; CPU time, best of {a.repeat}\n")
    print("| tokenizer | tokens | CPU s | tokens/s | MB/s | ours vs it |")
    print("|---|---|---|---|---|---|")
    ours_rate = rows[0][2] / rows[0][1]
    for name, seconds, tokens in rows:
        rate = tokens / seconds
        print(f"| {name} | {tokens} | {seconds:.3f} | {rate:,.0f} | {size / seconds / 1e6:.2f} | {ours_rate / rate:.2f}x |")
    if len({t for _, _, t in rows}) != 1:
        sys.exit("the token counts differ: not the same tokenization")


if __name__ == "__main__":
    main()
