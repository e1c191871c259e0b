// A LLaMA decoder with transformers' LlamaForCausalLM names (model.embed_tokens, model.layers.N.*,
// model.norm, lm_head): pre-RMSNorm blocks, rotate-half rotary embeddings, grouped-query causal
// attention and a SwiGLU MLP.
#include <cmath>
#include <string>

#include "models/layers.hpp"
#include "pock/compiler/models.hpp"

namespace pock::models {
namespace {

// LlamaRMSNorm: x / sqrt(mean(x^2) + eps) * weight, weight starting at 1.
TensorId rms_norm(Params& p, TensorId x, const std::string& name, int64_t dim, double eps) {
  return p.builder().named(name).rms_norm(x, p.fill(name + ".weight", {dim}, 1.0f), -1, eps);
}

// transformers' repeat_kv: each of the KV heads serves `groups` consecutive query heads,
// [B, kv, S, d] -> [B, kv * groups, S, d], so query head h reads KV head h / groups.
TensorId repeat_kv(ModelBuilder& b, TensorId x, int64_t groups, int64_t heads, int64_t seq, int64_t head_dim) {
  if (groups == 1) return x;
  const TensorId expanded = b.expand(b.unsqueeze(x, {2}), {1, 1, groups, 1, 1});  // [B, kv, groups, S, d]
  return b.reshape(expanded, {0, heads, seq, head_dim});
}

// A decode step: its tokens start at `position` (an i64 input) and each layer keeps its keys and
// values in caches of `capacity` positions.
struct DecodeStep {
  TensorId position = kNoTensor;
  int64_t batch = 1, capacity = 0;
};

// LlamaAttention: causal softmax(rope(q) rope(k)^T / sqrt(d)) v over grouped KV heads, then o_proj;
// in a decode step, over the layer's KV cache.
TensorId self_attention(Params& p, const LlamaConfig& c, TensorId x, const std::string& name, const DecodeStep* step) {
  ModelBuilder& b = p.builder();
  const int64_t d = c.hidden_size / c.num_heads;
  const LinearInit init{.normal_std = c.initializer_range};
  RopeOptions rope;
  rope.theta = c.rope_theta;
  auto project = [&](const char* which, int64_t heads) {
    return split_heads(b, linear(p, x, name + "." + which, c.hidden_size, heads * d, false, init), heads, d);
  };
  const TensorId position = step ? step->position : kNoTensor;
  const TensorId q = b.named(name + ".rotary_q").rope(project("q_proj", c.num_heads), rope, position);
  TensorId k = b.named(name + ".rotary_k").rope(project("k_proj", c.num_kv_heads), rope, position);
  TensorId v = project("v_proj", c.num_kv_heads);
  if (step) {
    const Shape cache = {step->batch, c.num_kv_heads, step->capacity, d};
    const TensorId context = b.named(name + ".cached_attention")
                                 .cached_attention(q, k, v, b.cache(name + ".key_cache", cache),
                                                   b.cache(name + ".value_cache", cache), position, 1.0 / std::sqrt(double(d)));
    return linear(p, merge_heads(b, context), name + ".o_proj", c.num_heads * d, c.hidden_size, false, init);
  }
  const int64_t groups = c.num_heads / c.num_kv_heads;
  k = repeat_kv(b, k, groups, c.num_heads, c.seq_len, d);
  v = repeat_kv(b, v, groups, c.num_heads, c.seq_len, d);
  TensorId scores = b.scale_shift(b.named(name + ".scores").matmul(q, k, false, true), 1.0 / std::sqrt(double(d)));
  scores = b.named(name + ".causal_mask").causal_mask(scores);
  const TensorId probs = b.named(name + ".softmax").softmax(scores, -1);
  const TensorId context = merge_heads(b, b.named(name + ".context").matmul(probs, v));
  return linear(p, context, name + ".o_proj", c.num_heads * d, c.hidden_size, false, init);
}

// LlamaMLP: down_proj(silu(gate_proj(x)) * up_proj(x)).
TensorId mlp(Params& p, const LlamaConfig& c, TensorId x, const std::string& name) {
  ModelBuilder& b = p.builder();
  const LinearInit init{.normal_std = c.initializer_range};
  const TensorId gate = linear(p, x, name + ".gate_proj", c.hidden_size, c.intermediate_size, false, init);
  const TensorId up = linear(p, x, name + ".up_proj", c.hidden_size, c.intermediate_size, false, init);
  const TensorId hidden = b.mul(b.named(name + ".act_fn").silu(gate), up);
  return linear(p, hidden, name + ".down_proj", c.intermediate_size, c.hidden_size, false, init);
}

Status check(const LlamaConfig& c) {
  if (c.batch < 1 || c.seq_len < 1 || c.vocab_size < 1 || c.hidden_size < 1 || c.num_layers < 0 || c.num_heads < 1 ||
      c.num_kv_heads < 1 || c.intermediate_size < 1) {
    return Status(Code::kInvalidArgument, "llama_causal_lm: sizes must be >= 1 (num_layers >= 0)");
  }
  if (c.hidden_size % c.num_heads != 0 || (c.hidden_size / c.num_heads) % 2 != 0) {
    return Status(Code::kInvalidArgument, "llama_causal_lm: hidden_size " + std::to_string(c.hidden_size) +
                                              " must split into num_heads " + std::to_string(c.num_heads) +
                                              " heads of an even size (rotary pairs)");
  }
  if (c.decode_cache < 0 || c.decode_batch < 1) {
    return Status(Code::kInvalidArgument, "llama_causal_lm: decode_cache must be >= 0 and decode_batch >= 1");
  }
  if (c.num_heads % c.num_kv_heads != 0) {
    return Status(Code::kInvalidArgument, "llama_causal_lm: num_heads " + std::to_string(c.num_heads) +
                                              " is not a multiple of num_kv_heads " + std::to_string(c.num_kv_heads));
  }
  return Status::ok();
}

// The decoder over input_ids [B, S] to logits [B, S, vocab]; in a decode step, over the caches.
TensorId decoder(Params& p, const LlamaConfig& c, TensorId input_ids, const DecodeStep* step) {
  ModelBuilder& b = p.builder();
  const TensorId embed = p.normal("model.embed_tokens.weight", {c.vocab_size, c.hidden_size}, c.initializer_range);
  TensorId x = b.named("model.embed_tokens").embedding(embed, input_ids);  // [B, S, H]
  for (int64_t i = 0; i < c.num_layers; ++i) {
    const std::string name = "model.layers." + std::to_string(i);
    const TensorId attn = self_attention(p, c, rms_norm(p, x, name + ".input_layernorm", c.hidden_size, c.rms_norm_eps),
                                         name + ".self_attn", step);
    x = b.named(name + ".attn_residual").add(x, attn);
    const TensorId ffn =
        mlp(p, c, rms_norm(p, x, name + ".post_attention_layernorm", c.hidden_size, c.rms_norm_eps), name + ".mlp");
    x = b.named(name + ".mlp_residual").add(x, ffn);
  }
  x = rms_norm(p, x, "model.norm", c.hidden_size, c.rms_norm_eps);
  // Tied: the output projection is the embedding table itself (one parameter, two uses).
  const TensorId head =
      c.tie_word_embeddings ? embed : p.normal("lm_head.weight", {c.vocab_size, c.hidden_size}, c.initializer_range);
  return b.named("lm_head").linear(x, head);
}

}  // namespace

LlamaConfig smollm2_135m_config() { return LlamaConfig{}; }

Result<Graph> llama_causal_lm(const LlamaConfig& c) {
  POCK_RETURN_IF_ERROR(check(c));
  ModelBuilder b;
  Params p(b, c.seed);
  b.output(decoder(p, c, b.input("input_ids", DType::kI64, {c.batch, c.seq_len}), nullptr), "logits");
  if (c.decode_cache == 0) return b.finish();
  // The decode function: one token per sequence at a time, through the same weights.
  const size_t first_decode_node = b.graph().nodes().size();
  p.reuse_existing();
  DecodeStep step;
  step.batch = c.decode_batch;
  step.capacity = c.decode_cache;
  step.position = b.input("decode.position", DType::kI64, {1});
  const TensorId ids = b.input("decode.input_ids", DType::kI64, {c.decode_batch, 1});
  b.output(decoder(p, c, ids, &step), "decode.logits");
  POCK_ASSIGN_OR_RETURN(Graph g, b.finish());
  POCK_RETURN_IF_ERROR(g.split_function("decode", first_decode_node));
  return g;
}

}  // namespace pock::models
