#!/usr/bin/env python3
"""Our tokenizer (pockc tokenize) against the model's reference tokenizers on a corpus: the
Hugging Face tokenizer transformers builds from the same GGUF file (with SmolLM2's digit split,
which the converter drops, put back), and llama.cpp's (llama-cpp-python). Every line of the fortune files (Debian's fortunes-min) and a set of hard
cases; prints the mismatches. Not in CI (the model file comes from a pip package); the C++ test
tests/text/test_tokenizer.cpp checks a committed fixture made by make_tokenizer_fixture.py.
    python tests/text/check_tokenizer.py --pockc build/pockc [FILE ...]"""
import argparse
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "models"))
from smollm2_gguf import smollm2_gguf  # noqa: E402

HARD = ["", " ", "  ", "a", "Hello, world!", "It's a dog's life; they're here, we've got it, I'm sure you'll see, he'd go.",
        "IT'S LOUD", "abc 123 4567 89.5 1,000,000", "x  y   z", "tabs\tand\nnewlines\n\n\nend\n", " leading and trailing  ",
        "naïve café résumé", "東京 日本語のテキスト", "emoji 🙂🚀 ok", "Ünïcödé ÅÄÖ", "¡¿ punctuation !?...---",
        "<|im_start|>user\nhi<|im_end|>", "math: x^2 + y_1 = 3.14e-5", "snake_case and CamelCase", "\u00a0nbsp\u2003em",
        "a\x04b", "ÿÿÿ", "ℕ ⅧⅨ ²³", "Ελληνικά и русский", "'quoted' \"double\"", "‘curly’ “quotes”"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pockc", required=True)
    ap.add_argument("files", nargs="*", default=[f"/usr/share/games/fortunes/{f}" for f in ("fortunes", "literature", "riddles")])
    a = ap.parse_args()
    from llama_cpp import Llama
    from transformers import AutoTokenizer
    folder, name = smollm2_gguf()
    path = os.path.join(folder, name)
    hf = AutoTokenizer.from_pretrained(folder, gguf_file=name)
    # transformers' GGUF converter keeps only the ByteLevel step of SmolLM2's pre-tokenizer; the
    # model's own tokenizer.json isolates every digit first (Digits(individual_digits=True)), as
    # llama.cpp's "smollm" split does. Restore it, so the oracle is the model's tokenizer.
    from tokenizers import pre_tokenizers
    hf.backend_tokenizer.pre_tokenizer = pre_tokenizers.Sequence(
        [pre_tokenizers.Digits(individual_digits=True),
         pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=False, use_regex=True)])
    llm = Llama(model_path=path, vocab_only=True, verbose=False)
    lines = list(HARD)
    for f in a.files:
        lines += open(f, encoding="utf-8", errors="surrogateescape").read().split("\n")
    lines = [l for l in lines if "\r" not in l]
    # Texts with newlines go one by one (the file form is a text per line).
    multi = [l for l in lines if "\n" in l]
    lines = [l for l in lines if "\n" not in l]
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False, encoding="utf-8", errors="surrogateescape") as t:
        t.write("\n".join(lines) + "\n")
    start = time.perf_counter()
    out = subprocess.run([a.pockc, "tokenize", path, "--file", t.name], check=True, capture_output=True, text=True).stdout
    ours_s = time.perf_counter() - start
    os.unlink(t.name)
    ours = [[int(x) for x in row.split(",")] if row else [] for row in out.split("\n")[: len(lines)]]
    for l in multi:
        row = subprocess.run([a.pockc, "tokenize", path, "--text", l], check=True, capture_output=True, text=True).stdout.strip()
        ours.append([int(x) for x in row.split(",")] if row else [])
    lines += multi
    start = time.perf_counter()
    theirs = [hf(l, add_special_tokens=False)["input_ids"] for l in lines]
    hf_s = time.perf_counter() - start
    cpp = [llm.tokenize(l.encode("utf-8", errors="surrogateescape"), add_bos=False, special=True) for l in lines]
    bad_hf = [i for i in range(len(lines)) if ours[i] != theirs[i]]
    bad_cpp = [i for i in range(len(lines)) if ours[i] != cpp[i]]
    tokens = sum(len(t) for t in theirs)
    print(f"{len(lines)} lines, {tokens} tokens: {len(bad_hf)} differ from Hugging Face's, {len(bad_cpp)} from llama.cpp's")
    for i in bad_hf[:10]:
        print(f"  HF   {lines[i]!r}\n    ours   {ours[i]}\n    theirs {theirs[i]}")
    for i in bad_cpp[:10]:
        print(f"  cpp  {lines[i]!r}\n    ours   {ours[i]}\n    theirs {cpp[i]}")
    print(f"time: pockc tokenize {ours_s:.2f} s (process start and vocabulary load included), "
          f"Hugging Face tokenizers one call per line {hf_s:.2f} s")
    if bad_hf:
        sys.exit("FAILED")
    print("PASS")


if __name__ == "__main__":
    main()
