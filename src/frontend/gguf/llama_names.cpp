#include "frontend/gguf/llama_names.hpp"

#include <algorithm>

namespace pock::gguf {

Result<LlamaTensorName> llama_tensor_name(const std::string& g, int64_t num_heads, int64_t num_kv_heads) {
  static const std::pair<const char*, const char*> kGlobal[] = {
      {"token_embd.weight", "model.embed_tokens.weight"}, {"output_norm.weight", "model.norm.weight"}, {"output.weight", "lm_head.weight"}};
  for (const auto& [from, to] : kGlobal) {
    if (g == from) return LlamaTensorName{to, 0};
  }
  static const std::pair<const char*, const char*> kBlock[] = {
      {"attn_norm.weight", "input_layernorm.weight"}, {"attn_q.weight", "self_attn.q_proj.weight"},
      {"attn_k.weight", "self_attn.k_proj.weight"},   {"attn_v.weight", "self_attn.v_proj.weight"},
      {"attn_output.weight", "self_attn.o_proj.weight"}, {"ffn_norm.weight", "post_attention_layernorm.weight"},
      {"ffn_gate.weight", "mlp.gate_proj.weight"},    {"ffn_up.weight", "mlp.up_proj.weight"},
      {"ffn_down.weight", "mlp.down_proj.weight"}};
  if (g.rfind("blk.", 0) == 0) {
    const size_t dot = g.find('.', 4);
    const std::string index = dot == std::string::npos ? "" : g.substr(4, dot - 4);
    if (!index.empty() && index.size() < 9 && index.find_first_not_of("0123456789") == std::string::npos) {
      const std::string rest = g.substr(dot + 1);
      for (const auto& [from, to] : kBlock) {
        if (rest != from) continue;
        const int64_t heads = rest == "attn_q.weight" ? num_heads : rest == "attn_k.weight" ? num_kv_heads : 0;
        return LlamaTensorName{"model.layers." + index + "." + to, heads};
      }
    }
  }
  return Status(Code::kUnsupportedOp, "GGUF: tensor '" + g + "' has no place in the llama graph");
}

std::vector<int64_t> hf_row_order(int64_t rows, int64_t heads) {
  std::vector<int64_t> order(static_cast<size_t>(rows));
  const int64_t d = rows / heads, half = d / 2;
  // GGUF keeps each head's pairs (i, i + d/2) adjacent: rows 2i and 2i + 1.
  for (int64_t h = 0; h < heads; ++h) {
    for (int64_t i = 0; i < half; ++i) {
      for (int64_t j = 0; j < 2; ++j) order[h * d + j * half + i] = h * d + 2 * i + j;
    }
  }
  return order;
}

std::vector<float> reorder_head_rows(const std::vector<float>& w, int64_t cols, int64_t heads, bool to_hf) {
  std::vector<float> out(w.size());
  const int64_t rows = static_cast<int64_t>(w.size()) / cols;
  const std::vector<int64_t> order = hf_row_order(rows, heads);
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t from = to_hf ? order[r] : r, to = to_hf ? r : order[r];
    std::copy_n(w.data() + from * cols, cols, out.data() + to * cols);
  }
  return out;
}

}  // namespace pock::gguf
