// BertModel and BertForSequenceClassification checkpoints into models::bert_classifier's graph:
// the encoder (and pooler) from the checkpoint, with or without its "bert." prefix, and the
// classification head from the checkpoint, freshly initialized, or left out (HfImportOptions).
#include <set>

#include "frontend/safetensors/hf_models.hpp"
#include "pock/compiler/models.hpp"

namespace pock::hf {
namespace {

Status unsupported(const std::string& what) { return Status(Code::kUnsupportedOp, "config.json: " + what); }

Result<models::BertConfig> bert_config(const HfConfig& config, const HfImportOptions& o) {
  models::BertConfig c;
  POCK_RETURN_IF_ERROR(read_common_sizes(config, o, &c));
  c.attention_mask = o.attention_mask;
  c.token_type_ids = o.token_type_ids;
  // BertConfig's defaults where config.json is silent.
  POCK_ASSIGN_OR_RETURN(c.max_position_embeddings, config.size_or("max_position_embeddings", 512));
  POCK_ASSIGN_OR_RETURN(c.type_vocab_size, config.size_or("type_vocab_size", 2));
  POCK_ASSIGN_OR_RETURN(c.layer_norm_eps, config.number_or("layer_norm_eps", 1e-12));
  POCK_ASSIGN_OR_RETURN(c.hidden_dropout, config.number_or("hidden_dropout_prob", 0.1));
  POCK_ASSIGN_OR_RETURN(c.attention_dropout, config.number_or("attention_probs_dropout_prob", 0.1));
  POCK_ASSIGN_OR_RETURN(c.pad_token_id, config.integer_or("pad_token_id", 0));
  if (!(c.layer_norm_eps >= 0.0)) return Status(Code::kInvalidArgument, "config.json: layer_norm_eps must be >= 0");
  // The builder's GELU is the exact (erf) one, its positions absolute, its blocks encoder blocks.
  POCK_RETURN_IF_ERROR(config.require_string("hidden_act", "gelu", "gelu"));
  POCK_RETURN_IF_ERROR(config.require_string("position_embedding_type", "absolute", "absolute"));
  POCK_RETURN_IF_ERROR(config.require_off("is_decoder", "the builder makes encoders"));
  POCK_RETURN_IF_ERROR(config.require_off("add_cross_attention", "the builder makes encoders"));
  if (c.hidden_size % c.num_heads != 0) {
    return Status(Code::kInvalidArgument, "config.json: num_attention_heads " + std::to_string(c.num_heads) +
                                              " does not divide hidden_size " + std::to_string(c.hidden_size));
  }
  return c;
}

// BertModel's tensors, as the graph names them (the checkpoint may prefix them with "bert.").
std::vector<ExpectedTensor> encoder_tensors(const models::BertConfig& c, const std::string& prefix, bool pooler) {
  const uint64_t h = c.hidden_size, ffn = c.intermediate_size;
  std::vector<ExpectedTensor> out;
  auto add = [&](const std::string& name, std::vector<uint64_t> shape) { out.push_back({prefix + name, name, std::move(shape)}); };
  auto linear = [&](const std::string& name, uint64_t in, uint64_t out_features) {
    add(name + ".weight", {out_features, in});
    add(name + ".bias", {out_features});
  };
  auto layer_norm = [&](const std::string& name) {
    add(name + ".weight", {h});
    add(name + ".bias", {h});
  };
  add("embeddings.word_embeddings.weight", {uint64_t(c.vocab_size), h});
  add("embeddings.position_embeddings.weight", {uint64_t(c.max_position_embeddings), h});
  add("embeddings.token_type_embeddings.weight", {uint64_t(c.type_vocab_size), h});
  layer_norm("embeddings.LayerNorm");
  for (int64_t i = 0; i < c.num_layers; ++i) {
    const std::string layer = "encoder.layer." + std::to_string(i) + ".";
    for (const char* p : {"query", "key", "value"}) linear(layer + "attention.self." + p, h, h);
    linear(layer + "attention.output.dense", h, h);
    layer_norm(layer + "attention.output.LayerNorm");
    linear(layer + "intermediate.dense", h, ffn);
    linear(layer + "output.dense", ffn, h);
    layer_norm(layer + "output.LayerNorm");
  }
  if (pooler) linear("pooler.dense", h, h);
  return out;
}

// The classification head: the checkpoint's, a fresh one, or none (HfImportOptions::num_labels).
Status choose_head(const Checkpoint& checkpoint, const HfImportOptions& o, bool pooler, models::BertConfig* c,
                   bool* fresh) {
  if (o.num_labels > (int64_t{1} << 24)) return Status(Code::kInvalidArgument, "num_labels is out of range");
  const safetensors::TensorInfo* saved = checkpoint.find("classifier.weight");
  const int64_t saved_labels = saved && !saved->shape.empty() ? static_cast<int64_t>(saved->shape[0]) : 0;
  c->num_labels = o.num_labels < 0 ? saved_labels : o.num_labels;
  if (saved && o.num_labels > 0 && saved_labels != o.num_labels) {
    return Status(Code::kShapeMismatch, "num_labels " + std::to_string(o.num_labels) + ": the checkpoint's classifier has " +
                                            std::to_string(saved_labels) + " labels");
  }
  *fresh = c->num_labels > 0 && !saved;
  c->pooler = pooler;
  if (c->num_labels > 0 && !pooler) return Status(Code::kNotFound, "a classifier needs the pooler, which the checkpoint lacks");
  return Status::ok();
}

}  // namespace

Result<Graph> bert_from_hf(const HfConfig& config, const Checkpoint& checkpoint, const HfImportOptions& options) {
  POCK_ASSIGN_OR_RETURN(models::BertConfig c, bert_config(config, options));
  // Sixteen tensors a layer: a layer count the checkpoint cannot back is refused before any loop.
  if (static_cast<uint64_t>(c.num_layers) * 16 > checkpoint.size()) {
    return Status(Code::kInvalidArgument, "config.json: num_hidden_layers " + std::to_string(c.num_layers) +
                                              " needs more tensors than the checkpoint has");
  }
  const std::string prefix = checkpoint.find("bert.embeddings.word_embeddings.weight") ? "bert." : "";
  const bool pooler = checkpoint.find(prefix + "pooler.dense.weight") != nullptr;
  bool fresh_head = false;
  POCK_RETURN_IF_ERROR(choose_head(checkpoint, options, pooler, &c, &fresh_head));
  if (c.num_labels > 0) {
    POCK_ASSIGN_OR_RETURN(const double classifier_dropout, config.number_or("classifier_dropout", c.hidden_dropout));
    if (classifier_dropout != c.hidden_dropout) return unsupported("classifier_dropout differs from hidden_dropout_prob");
  }
  std::vector<ExpectedTensor> expected = encoder_tensors(c, prefix, pooler);
  // Buffers and heads the graph has no place for: position ids, a pre-training head ("cls.*"), a
  // classifier the caller asked to leave out.
  std::set<std::string> ignored = {prefix + "embeddings.position_ids"};
  for (const char* name : {"classifier.weight", "classifier.bias"}) {
    if (c.num_labels == 0) ignored.insert(name);
  }
  if (c.num_labels > 0 && !fresh_head) {
    expected.push_back({"classifier.weight", "classifier.weight", {uint64_t(c.num_labels), uint64_t(c.hidden_size)}});
    expected.push_back({"classifier.bias", "classifier.bias", {uint64_t(c.num_labels)}});
  }
  for (const std::string& name : checkpoint.names_starting_with("cls.")) ignored.insert(name);
  POCK_RETURN_IF_ERROR(checkpoint.check(expected, ignored));
  POCK_ASSIGN_OR_RETURN(Graph graph, models::bert_classifier(c));
  POCK_ASSIGN_OR_RETURN(const models::WeightMap weights, checkpoint.read(expected));
  // A fresh head keeps the builder's initial values (transformers' _init_weights); every other
  // parameter comes from the checkpoint.
  models::LoadWeightsOptions load;
  load.require_all = !fresh_head;
  POCK_RETURN_IF_ERROR(models::load_weights(graph, weights, load));
  for (const TensorDesc& t : graph.tensors()) {
    if (t.kind == TensorKind::kParameter && !weights.count(t.name) && t.name.rfind("classifier.", 0) != 0) {
      return Status(Code::kInternal, "BERT import: no checkpoint value for '" + t.name + "'");
    }
  }
  return graph;
}

}  // namespace pock::hf
