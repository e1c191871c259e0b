#!/usr/bin/env python3
"""Our tokenizer (pockc tokenize) against the reference tokenizers (tokenizer_oracles.py) on the
whole fortune corpus: every fortune (the multi-line texts between '%' lines) and every line of
the files Debian's `fortunes` and `fortunes-min` install, plus hard cases, for each pre-tokenizer
(SmolLM2's vocabulary with tokenizer.ggml.pre set to smollm, gpt-2, llama-bpe, default). Prints
the mismatches per oracle; exits non-zero on any with Hugging Face's. Not in CI (the model file
comes from a pip package); tests/text/test_tokenizer.cpp checks the committed fixture instead.
    python tests/text/check_tokenizer.py --pockc build/pockc [--pre smollm] [--limit N]

Known differences with llama.cpp, counted apart: a byte without a token of its own (SmolLM2 lacks
a few control bytes, e.g. 0x04) is the unknown token in Hugging Face's tokenizer and ours,
dropped by llama.cpp. Text that is not UTF-8 only llama.cpp takes (bytes): it is compared there."""
import argparse
import glob
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
import tokenizer_oracles as oracles  # noqa: E402

HARD = ["", " ", "  ", "a", "Hello, world!", "It's a dog's life; they're here, we've got it, I'm sure you'll see, he'd go.",
        "IT'S LOUD", "IT'S, THEY'RE, I'LL, WE'VE", "abc 123 4567 89.5 1,000,000", "x  y   z", "tabs\tand\nnewlines\n\n\nend\n",
        " leading and trailing  ", "naïve café résumé", "東京 日本語のテキスト", "emoji 🙂🚀 ok", "Ünïcödé ÅÄÖ",
        "¡¿ punctuation !?...---", "<|im_start|>user\nhi<|im_end|>", "<|im_start|><|im_end|><|endoftext|>x<|im_end",
        "math: x^2 + y_1 = 3.14e-5", "snake_case and CamelCase", "\u00a0nbsp\u2003em", "a\x04b", "a\x04\x04b", "ÿÿÿ",
        "ℕ ⅧⅨ ²³ ٣٤٥ १२३", "Ελληνικά и русский", "'quoted' \"double\"", "‘curly’ “quotes”", "line\r\nwindows\r\n",
        "  \n  \n\t\t x", "a\u0085b\u2028c\u200bd", "$100 + <tag> | pipe ~ tilde ^ caret", "١٢٣٤٥٦", "1234567890123",
        "e\u0301 combining", "\U0001F468\u200d\U0001F469\u200d\U0001F467 family", "tab\t\tend", "don't DON'T", "'s's's"]
# Not UTF-8 (llama.cpp's oracle only): stray continuation bytes, truncated characters, bytes
# never in UTF-8. Left out: overlong forms and surrogates, which llama.cpp reads as code points
# (we replace them), and sequences past U+10FFFF, on which llama.cpp throws and aborts.
INVALID = [b"ok \x80 end", b"caf\xe9", b"\xe6\x97 cut", b"end \xc3", b"\xf0\x9f\x99", b"\xff\xfe", b"\xc3\xa9\xa9",
           b"12\x8034", b"\xe9t\xe9 \xe0 Paris", b"\x80\x80\x80"]


def unicode_sweep():
    """Every code point Python's unicodedata assigns, 16 to a text, each between letters, digits
    and spaces: the pre-tokenizers' \\p{L}, \\p{N}, \\p{P} and \\s, checked beyond the corpus."""
    import unicodedata
    points = [c for c in range(0x80, 0x110000) if unicodedata.category(chr(c)) not in ("Cn", "Cs", "Co")]
    return ["".join(f"{chr(c)}a{chr(c)}1 {chr(c)} {chr(c)}{chr(c)}'s\n" for c in points[i:i + 16]) for i in range(0, len(points), 16)]


def corpus(limit):
    texts = []
    files = sorted(f for f in glob.glob("/usr/share/games/fortunes/*") if not f.endswith((".dat", ".u8")) and os.path.isfile(f))
    for f in files:
        raw = open(f, encoding="utf-8", errors="surrogateescape").read()
        texts += [t for t in raw.split("\n%\n") if t]
        texts += raw.split("\n")
    texts = [t for t in texts if not any(0xDC80 <= ord(c) <= 0xDCFF for c in t)]  # files are UTF-8; stay safe
    texts = texts[:limit] if limit else texts
    return files, HARD + texts + unicode_sweep()


def ours(pockc, model, texts):
    with tempfile.NamedTemporaryFile("wb", suffix=".txt", delete=False) as t:
        t.write(b"\0".join(texts))
    r = subprocess.run([pockc, "tokenize", model, "--file", t.name, "--nul", "--time"], check=True, capture_output=True)
    os.unlink(t.name)
    rows = r.stdout.decode().split("\n")[: len(texts)]
    return [[int(x) for x in row.split(",")] if row else [] for row in rows], r.stderr.decode().strip()


def report(name, texts, mine, theirs, limit=5):
    bad = [i for i in range(len(texts)) if mine[i] != theirs[i]]
    for i in bad[:limit]:
        print(f"    {name} {texts[i]!r}\n      ours   {mine[i]}\n      theirs {theirs[i]}")
    return bad


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pockc", required=True)
    ap.add_argument("--pre", action="append", choices=oracles.PRE_TOKENIZERS)
    ap.add_argument("--limit", type=int, default=0, help="only the first N corpus texts")
    a = ap.parse_args()
    files, texts = corpus(a.limit)
    encoded = [t.encode("utf-8") for t in texts]
    print(f"corpus: {len(files)} fortune files, {len(texts)} texts (with {len(HARD)} hard cases and a sweep of Unicode), "
          f"{sum(map(len, encoded)) / 1e6:.2f} MB; {len(INVALID)} texts that are not UTF-8")
    failed = False
    with tempfile.TemporaryDirectory() as tmp:
        for pre in a.pre or oracles.PRE_TOKENIZERS:
            model = os.path.join(tmp, f"{pre}.gguf")
            oracles.write_tokenizer_gguf(model, pre)
            hf, cpp = oracles.hugging_face(pre), oracles.llama_cpp(model)
            mine, timing = ours(a.pockc, model, encoded + INVALID)
            mine, mine_invalid = mine[: len(texts)], mine[len(texts):]
            theirs_hf = [e.ids for e in hf.backend_tokenizer.encode_batch(texts, add_special_tokens=False)]
            theirs_cpp = [cpp.tokenize(b, add_bos=False, special=True) for b in encoded]
            theirs_invalid = [cpp.tokenize(b, add_bos=False, special=True) for b in INVALID]
            tokens = sum(map(len, theirs_hf))
            print(f"[{pre}] {tokens} tokens; pockc: {timing}")
            bad_hf = report("HF ", texts, mine, theirs_hf)
            unknown_bytes = {i for i, t in enumerate(texts) if 0 in theirs_hf[i]}
            bad_cpp = report("cpp", texts, mine, theirs_cpp)
            explained = [i for i in bad_cpp if i in unknown_bytes]
            bad_invalid = report("cpp", INVALID, mine_invalid, theirs_invalid)
            print(f"  Hugging Face: {len(bad_hf)} of {len(texts)} texts differ; llama.cpp: {len(bad_cpp)} differ "
                  f"({len(explained)} of them by its dropping bytes without a token); not UTF-8, llama.cpp: "
                  f"{len(bad_invalid)} of {len(INVALID)} differ")
            failed |= bool(bad_hf) or len(bad_cpp) != len(explained)
    if failed:
        sys.exit("FAILED")
    print("PASS")


if __name__ == "__main__":
    main()
