#!/usr/bin/env python3
"""Writes the GGUF exporter's fixtures with the `gguf` package (llama.cpp's own Python writer):
- tiny_llama.gguf: a whole llama model (2 blocks, 64 wide, 4 heads / 2 KV heads, tied
  embedding) whose weights are spread over F32, F16, Q8_0, Q4_0 and Q4_1, as gguf-py quantizes
  them, with the metadata llama.cpp needs to load it;
- quantize_expected.bin: random f32 values and the bytes gguf-py's quantizers make of them, for
  each type our writer quantizes to (the oracle for ggml_quantize.cpp). Layout: u64 count, the
  float32 values, then per type: u32 ggml type, u64 byte count, the bytes.
Run in a venv with `pip install gguf numpy`:
    python make_llama_fixture.py tests/frontend/gguf"""
import struct
import sys

import numpy as np
from gguf import GGMLQuantizationType as Q
from gguf import GGUFWriter, quants

out = sys.argv[1] if len(sys.argv) > 1 else "."
rng = np.random.RandomState(11)
hidden, heads, kv_heads, ff, blocks, vocab = 64, 4, 2, 128, 2, 96
w = GGUFWriter(f"{out}/tiny_llama.gguf", "llama")
w.add_block_count(blocks)
w.add_context_length(128)
w.add_embedding_length(hidden)
w.add_feed_forward_length(ff)
w.add_head_count(heads)
w.add_head_count_kv(kv_heads)
w.add_rope_dimension_count(hidden // heads)
w.add_rope_freq_base(10000.0)
w.add_layer_norm_rms_eps(1e-5)
w.add_file_type(3)  # mostly Q4_1, as SmolLM2's file

kv = hidden // heads * kv_heads
tensors = [("token_embd.weight", Q.Q8_0, (vocab, hidden)), ("output_norm.weight", Q.F32, (hidden,))]
for b in range(blocks):
    p = f"blk.{b}."
    tensors += [(p + "attn_norm.weight", Q.F32, (hidden,)), (p + "attn_q.weight", Q.Q4_1, (hidden, hidden)),
                (p + "attn_k.weight", Q.Q4_1, (kv, hidden)), (p + "attn_v.weight", Q.Q4_0, (kv, hidden)),
                (p + "attn_output.weight", Q.F16, (hidden, hidden)), (p + "ffn_norm.weight", Q.F32, (hidden,)),
                (p + "ffn_gate.weight", Q.Q8_0, (ff, hidden)), (p + "ffn_up.weight", Q.Q4_1, (ff, hidden)),
                (p + "ffn_down.weight", Q.F32, (hidden, ff))]
for name, qtype, shape in tensors:
    values = (rng.randn(*shape) * (0.1 if len(shape) == 2 else 0.05) + (1.0 if len(shape) == 1 else 0.0)).astype(np.float32)
    data = quants.quantize(values, qtype)
    w.add_tensor(name, data, raw_shape=data.shape, raw_dtype=qtype)
w.write_header_to_file()
w.write_kv_data_to_file()
w.write_tensors_to_file()
w.close()

values = (rng.randn(8, 64) * 0.3).astype(np.float32)
values[0, :32] = 0.0           # an all-zero block: scale 0
values[1, :32] = 0.25          # a constant block
values[2, 5] = -3.0            # an outlier with the largest magnitude negative
with open(f"{out}/quantize_expected.bin", "wb") as f:
    f.write(struct.pack("<Q", values.size))
    f.write(values.tobytes())
    for qtype in (Q.F16, Q.BF16, Q.Q8_0, Q.Q4_0, Q.Q4_1):
        data = quants.quantize(values, qtype).tobytes()
        f.write(struct.pack("<IQ", int(qtype), len(data)))
        f.write(data)
