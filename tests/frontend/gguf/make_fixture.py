#!/usr/bin/env python3
"""Writes tiny.gguf and tiny_expected.bin, the GGUF reader's test fixture, with the `gguf`
package (llama.cpp's own Python reader/writer): one tensor of each type the reader converts,
quantized by gguf-py (K-quants: random blocks), and the values gguf-py's own dequantizer gives (the oracle the C++
reader is checked against). Run in a venv with `pip install gguf numpy`:
    python make_fixture.py tests/frontend/gguf
expected.bin: for each tensor in order, its element count (u64) then that many float32."""
import struct
import sys

import numpy as np
from gguf import GGMLQuantizationType as Q
from gguf import GGUFWriter, quants

out = sys.argv[1] if len(sys.argv) > 1 else "."
rng = np.random.RandomState(7)
w = GGUFWriter(f"{out}/tiny.gguf", "llama")
w.add_block_count(1)
w.add_context_length(64)
w.add_embedding_length(64)
w.add_feed_forward_length(96)
w.add_head_count(4)
w.add_head_count_kv(2)
w.add_rope_freq_base(10000.0)
w.add_layer_norm_rms_eps(1e-5)
w.add_string("tokenizer.ggml.model", "gpt2")
w.add_array("tokenizer.ggml.tokens", ["a", "b", "ab"])
expected = []
for name, qtype, shape in [("f32", Q.F32, (3, 64)), ("f16", Q.F16, (2, 64)), ("bf16", Q.BF16, (2, 64)),
                           ("q8_0", Q.Q8_0, (4, 64)), ("q4_0", Q.Q4_0, (4, 64)), ("q4_1", Q.Q4_1, (4, 64))]:
    values = (rng.randn(*shape) * 0.7).astype(np.float32)
    values[0, :3] = [0.0, -2.5, 1e-3]
    data = quants.quantize(values, qtype)
    w.add_tensor(name, data, raw_shape=data.shape, raw_dtype=qtype)
    expected.append(quants.dequantize(data, qtype).astype(np.float32).reshape(-1))
# K-quants: gguf-py dequantizes them but does not quantize, so their blocks are random bytes with
# the half-precision scales set to sane values (256 values per block).
for name, qtype, block_bytes, half_offsets in [("q4_k", Q.Q4_K, 144, (0, 2)), ("q6_k", Q.Q6_K, 210, (208,))]:
    rows, blocks_per_row = 3, 2
    raw = rng.randint(0, 256, size=(rows, blocks_per_row, block_bytes)).astype(np.uint8)
    for off in half_offsets:
        halves = (rng.uniform(0.001, 0.05, size=(rows, blocks_per_row))).astype(np.float16)
        raw[:, :, off:off + 2] = halves.view(np.uint8).reshape(rows, blocks_per_row, 2)
    data = raw.reshape(rows, blocks_per_row * block_bytes)
    w.add_tensor(name, data, raw_shape=data.shape, raw_dtype=qtype)
    expected.append(quants.dequantize(data, qtype).astype(np.float32).reshape(-1))
w.write_header_to_file()
w.write_kv_data_to_file()
w.write_tensors_to_file()
w.close()
with open(f"{out}/tiny_expected.bin", "wb") as f:
    for e in expected:
        f.write(struct.pack("<Q", e.size))
        f.write(e.tobytes())
