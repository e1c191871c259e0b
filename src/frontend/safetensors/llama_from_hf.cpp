// LlamaForCausalLM checkpoints into models::llama_causal_lm's graph. The checkpoint's names are
// already the graph's (transformers' own), so this is a configuration check and a shape check.
#include <set>

#include "frontend/safetensors/hf_models.hpp"
#include "pock/compiler/models.hpp"

namespace pock::hf {
namespace {

Status unsupported(const std::string& what) { return Status(Code::kUnsupportedOp, "config.json: " + what); }

// Rotary embeddings: plain RoPE only. transformers 4.x writes rope_theta and rope_scaling; 5.x
// writes rope_parameters {"rope_type", "rope_theta"}. A scaled variant (linear, dynamic, yarn,
// llama3) changes the frequencies, which the builder's Rope does not.
Status rope(const HfConfig& config, models::LlamaConfig* c) {
  POCK_ASSIGN_OR_RETURN(c->rope_theta, config.number_or("rope_theta", 10000.0));
  for (const char* key : {"rope_scaling", "rope_parameters"}) {
    const auto it = config.json().find(key);
    if (it == config.json().end() || it->is_null()) continue;
    if (!it->is_object()) return unsupported(std::string("'") + key + "' is not an object");
    for (const auto& [field, value] : it->items()) {
      if ((field == "rope_type" || field == "type") && value.is_string() && value.get<std::string>() == "default") continue;
      if (field == "rope_theta" && value.is_number()) {
        c->rope_theta = value.get<double>();
        continue;
      }
      return unsupported(std::string("'") + key + "." + field + "' is not supported (only plain RoPE: rope_type \"default\")");
    }
  }
  if (!(c->rope_theta > 0.0)) return Status(Code::kInvalidArgument, "config.json: rope_theta must be > 0");
  return Status::ok();
}

Result<models::LlamaConfig> llama_config(const HfConfig& config, const HfImportOptions& o) {
  models::LlamaConfig c;
  POCK_RETURN_IF_ERROR(read_common_sizes(config, o, &c));
  c.decode_cache = o.decode_cache;
  POCK_ASSIGN_OR_RETURN(c.num_kv_heads, config.size_or("num_key_value_heads", c.num_heads));
  POCK_ASSIGN_OR_RETURN(c.rms_norm_eps, config.number_or("rms_norm_eps", 1e-6));  // LlamaConfig's defaults
  POCK_ASSIGN_OR_RETURN(c.tie_word_embeddings, config.flag_or("tie_word_embeddings", false));
  if (!(c.rms_norm_eps >= 0.0)) return Status(Code::kInvalidArgument, "config.json: rms_norm_eps must be >= 0");
  POCK_RETURN_IF_ERROR(rope(config, &c));
  POCK_RETURN_IF_ERROR(config.require_string("hidden_act", "silu", "silu"));
  POCK_RETURN_IF_ERROR(config.require_off("attention_bias", "the builder's projections have no bias"));
  POCK_RETURN_IF_ERROR(config.require_off("mlp_bias", "the builder's MLP has no bias"));
  POCK_ASSIGN_OR_RETURN(const double attention_dropout, config.number_or("attention_dropout", 0.0));
  if (attention_dropout != 0.0) return unsupported("attention_dropout must be 0 (the builder has no attention dropout)");
  if (c.hidden_size % c.num_heads != 0 || c.num_heads % c.num_kv_heads != 0) {
    return Status(Code::kInvalidArgument, "config.json: num_attention_heads " + std::to_string(c.num_heads) + " / num_key_value_heads " +
                                              std::to_string(c.num_kv_heads) + " do not divide hidden_size " +
                                              std::to_string(c.hidden_size));
  }
  POCK_ASSIGN_OR_RETURN(const int64_t head_dim, config.integer_or("head_dim", c.hidden_size / c.num_heads));
  if (head_dim != c.hidden_size / c.num_heads) {
    return unsupported("head_dim " + std::to_string(head_dim) + " differs from hidden_size / num_attention_heads");
  }
  return c;
}

std::vector<ExpectedTensor> expected_tensors(const models::LlamaConfig& c) {
  const uint64_t h = c.hidden_size, kv = c.hidden_size / c.num_heads * c.num_kv_heads, ffn = c.intermediate_size,
                 vocab = c.vocab_size;
  std::vector<ExpectedTensor> out;
  auto add = [&](const std::string& name, std::vector<uint64_t> shape) { out.push_back({name, name, std::move(shape)}); };
  add("model.embed_tokens.weight", {vocab, h});
  for (int64_t i = 0; i < c.num_layers; ++i) {
    const std::string layer = "model.layers." + std::to_string(i) + ".";
    add(layer + "input_layernorm.weight", {h});
    add(layer + "self_attn.q_proj.weight", {h, h});
    add(layer + "self_attn.k_proj.weight", {kv, h});
    add(layer + "self_attn.v_proj.weight", {kv, h});
    add(layer + "self_attn.o_proj.weight", {h, h});
    add(layer + "post_attention_layernorm.weight", {h});
    add(layer + "mlp.gate_proj.weight", {ffn, h});
    add(layer + "mlp.up_proj.weight", {ffn, h});
    add(layer + "mlp.down_proj.weight", {h, ffn});
  }
  add("model.norm.weight", {h});
  if (!c.tie_word_embeddings) add("lm_head.weight", {vocab, h});
  return out;
}

// Saved by some checkpoints, with no parameter in the graph: a tied head (the same values as the
// embedding table) and the rotary frequencies older transformers kept as buffers.
std::set<std::string> ignored_tensors(const models::LlamaConfig& c) {
  std::set<std::string> out;
  if (c.tie_word_embeddings) out.insert("lm_head.weight");
  for (int64_t i = 0; i < c.num_layers; ++i) out.insert("model.layers." + std::to_string(i) + ".self_attn.rotary_emb.inv_freq");
  return out;
}

}  // namespace

Result<Graph> llama_from_hf(const HfConfig& config, const Checkpoint& checkpoint, const HfImportOptions& options) {
  POCK_ASSIGN_OR_RETURN(const models::LlamaConfig c, llama_config(config, options));
  // Nine tensors a layer: a layer count the checkpoint cannot back is refused before any loop.
  if (static_cast<uint64_t>(c.num_layers) * 9 > checkpoint.size()) {
    return Status(Code::kInvalidArgument, "config.json: num_hidden_layers " + std::to_string(c.num_layers) +
                                              " needs more tensors than the checkpoint has");
  }
  const std::vector<ExpectedTensor> expected = expected_tensors(c);
  POCK_RETURN_IF_ERROR(checkpoint.check(expected, ignored_tensors(c)));
  POCK_ASSIGN_OR_RETURN(Graph graph, models::llama_causal_lm(c));
  POCK_ASSIGN_OR_RETURN(const models::WeightMap weights, checkpoint.read(expected));
  models::LoadWeightsOptions load;
  load.require_all = true;
  POCK_RETURN_IF_ERROR(models::load_weights(graph, weights, load));
  return graph;
}

}  // namespace pock::hf
