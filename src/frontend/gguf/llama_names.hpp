// The correspondence between a llama GGUF file's tensors and transformers' LlamaForCausalLM
// parameters, shared by the importer and the exporter: names, and the order of q_proj/k_proj
// rows. llama.cpp's converter stores those with the two halves of each head's rows interleaved
// (its rope rotates adjacent pairs; transformers' rotates halves).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "pock/status.hpp"

namespace pock::gguf {

struct LlamaTensorName {
  std::string hf;     // transformers' name ("model.layers.3.self_attn.q_proj.weight")
  int64_t heads = 0;  // > 0: rows grouped in this many heads, interleaved in the GGUF file
};

// `num_heads` / `num_kv_heads` of the model; an unknown GGUF name is an error naming it.
Result<LlamaTensorName> llama_tensor_name(const std::string& gguf_name, int64_t num_heads, int64_t num_kv_heads);

// For a [rows, ...] tensor in `heads` heads: row r of transformers' order is GGUF row
// order[r]. rows / heads must be even (checked by the caller).
std::vector<int64_t> hf_row_order(int64_t rows, int64_t heads);

// A row-major [rows, cols] matrix in `heads` heads from GGUF's row order to transformers'
// (to_hf) or back.
std::vector<float> reorder_head_rows(const std::vector<float>& w, int64_t cols, int64_t heads, bool to_hf);

}  // namespace pock::gguf
