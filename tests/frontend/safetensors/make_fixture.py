#!/usr/bin/env python3
"""Writes the safetensors frontend's test fixtures with Hugging Face's own packages (the oracle the
C++ tests are checked against; nothing here is computed by PockEngine):

  dtypes.safetensors + dtypes_expected.bin   one tensor per dtype (F32, F16, BF16, I64), written by
                                             the `safetensors` package; expected: torch's f32 values
  llama/     a tiny LlamaForCausalLM (random weights, untied head), saved by transformers'
             save_pretrained in shards with model.safetensors.index.json; expected.bin: input_ids
             and transformers' logits
  bert/      a tiny BertModel (names without prefix, with pooler); expected.bin: input_ids,
             last_hidden_state, pooler_output
  bert_cls/  a tiny BertForSequenceClassification ("bert." names, 3 labels) saved in float16;
             expected.bin: input_ids, attention_mask, token_type_ids and the logits of the
             float16 weights computed in float32

expected.bin format (little-endian; tests/models/zoo_reference.hpp reads it): b"PKZOO1\\n\\0",
u32 count, then per tensor: u32 name length, name, u32 dtype (0 f32, 1 i64), u32 rank,
i64 dims[rank], row-major data.

usage (a Python with torch, transformers, safetensors, numpy):
    python tests/frontend/safetensors/make_fixture.py tests/frontend/safetensors"""
import os
import struct
import sys

import numpy as np
import torch
from safetensors.torch import save_file
from transformers import BertConfig, BertForSequenceClassification, BertModel, LlamaConfig, LlamaForCausalLM


def write_expected(path, tensors):
    codes = {np.dtype(np.float32): 0, np.dtype(np.int64): 1}
    with open(path, "wb") as f:
        f.write(b"PKZOO1\n\0" + struct.pack("<I", len(tensors)))
        for name, value in tensors.items():
            a = np.ascontiguousarray(value.detach().numpy() if torch.is_tensor(value) else value)
            f.write(struct.pack("<I", len(name)) + name.encode())
            f.write(struct.pack("<II", codes[a.dtype], a.ndim) + struct.pack(f"<{a.ndim}q", *a.shape))
            f.write(a.astype(a.dtype.newbyteorder("<")).tobytes())


def randomize(model, gen):
    """Every parameter random and large enough to matter (norm scales around 1)."""
    with torch.no_grad():
        for name, p in model.named_parameters():
            noise = torch.randn(p.shape, generator=gen)
            p.copy_(1.0 + 0.2 * noise if "norm" in name.lower() else 0.5 * noise)


def dtypes_fixture(out, gen):
    values = torch.randn(3, 5, generator=gen)
    values[0, :3] = torch.tensor([0.0, -2.5, 1e-3])
    tensors = {"f32": values.clone(), "f16": values.to(torch.float16), "bf16": values.to(torch.bfloat16),
               "i64": torch.arange(6, dtype=torch.int64).reshape(2, 3), "empty": torch.zeros(0, 4)}
    save_file(tensors, os.path.join(out, "dtypes.safetensors"), metadata={"format": "pt"})
    write_expected(os.path.join(out, "dtypes_expected.bin"),
                   {name: t.float() for name, t in tensors.items() if t.is_floating_point()})


def llama_fixture(out, gen):
    config = LlamaConfig(vocab_size=16, hidden_size=8, intermediate_size=12, num_hidden_layers=2, num_attention_heads=2,
                         num_key_value_heads=1, max_position_embeddings=32, rms_norm_eps=1e-5, rope_theta=500.0,
                         tie_word_embeddings=False)
    model = LlamaForCausalLM(config).eval()
    randomize(model, gen)
    folder = os.path.join(out, "llama")
    model.save_pretrained(folder, safe_serialization=True, max_shard_size="2KB")
    ids = torch.randint(0, 16, (2, 5), generator=gen)
    with torch.no_grad():
        logits = model(ids).logits
    write_expected(os.path.join(folder, "expected.bin"), {"input_ids": ids, "logits": logits})


def bert_config(**extra):
    return BertConfig(vocab_size=20, hidden_size=8, num_hidden_layers=2, num_attention_heads=2, intermediate_size=12,
                      max_position_embeddings=16, type_vocab_size=2, **extra)


def bert_fixture(out, gen):
    model = BertModel(bert_config()).eval()
    randomize(model, gen)
    folder = os.path.join(out, "bert")
    model.save_pretrained(folder, safe_serialization=True)
    ids = torch.randint(0, 20, (2, 6), generator=gen)
    with torch.no_grad():
        result = model(ids)
    write_expected(os.path.join(folder, "expected.bin"), {"input_ids": ids, "last_hidden_state": result.last_hidden_state,
                                                          "pooler_output": result.pooler_output})


def bert_cls_fixture(out, gen):
    model = BertForSequenceClassification(bert_config(num_labels=3)).eval()
    randomize(model, gen)
    folder = os.path.join(out, "bert_cls")
    model.half().save_pretrained(folder, safe_serialization=True)
    model.float()  # the float16 values, computed in float32 as the importer does
    ids = torch.randint(0, 20, (2, 6), generator=gen)
    mask = torch.ones(2, 6, dtype=torch.int64)
    mask[1, 4:] = 0
    types = torch.zeros(2, 6, dtype=torch.int64)
    types[:, 3:] = 1
    with torch.no_grad():
        logits = model(input_ids=ids, attention_mask=mask, token_type_ids=types).logits
    write_expected(os.path.join(folder, "expected.bin"),
                   {"input_ids": ids, "attention_mask": mask, "token_type_ids": types, "logits": logits})


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    gen = torch.Generator().manual_seed(7)
    dtypes_fixture(out, gen)
    llama_fixture(out, gen)
    bert_fixture(out, gen)
    bert_cls_fixture(out, gen)


if __name__ == "__main__":
    main()
