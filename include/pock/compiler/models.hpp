// The model zoo: MobileNetV2, ResNet-18, a BERT encoder (MiniLM-L6 shape) with a sequence-
// classification head and a LLaMA decoder (SmolLM2-135M shape), built with ModelBuilder.
//
// Parameters carry PyTorch's state_dict names (torchvision, Hugging Face), so recipes select them
// with the globs users know ("classifier.*", "model.layers.29.*") and checkpoints load by name:
//
//   auto graph = pock::models::mobilenet_v2(pock::models::mobilenet_v2_config());
//   POCK_RETURN_IF_ERROR(pock::models::load_weights(*graph, weights_by_name));
//   auto blob = pock::compile(*graph, &recipe);
//
// Every size is a config field, so tests build tiny variants; the *_config() presets are the full
// published shapes. Initial weights follow each source's own initialization (torchvision's
// kaiming-normal convs, Hugging Face's normal(0, 0.02)), drawn from `seed` and the parameter's name,
// so they do not depend on build order or platform. docs/models.md lists inputs and outputs.
#pragma once
#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "pock/compiler/graph.hpp"
#include "pock/status.hpp"

namespace pock::models {

// ---- MobileNetV2 (torchvision.models.mobilenet_v2) ---------------------------------------------
// Input "image" f32 [batch, 3, resolution, resolution]; output "logits" [batch, num_classes].
struct InvertedResidualStage {
  int64_t expand_ratio = 1;  // t
  int64_t channels = 16;     // c, before the width multiplier
  int64_t blocks = 1;        // n
  int64_t stride = 1;        // s, of the stage's first block
};

struct MobileNetV2Config {
  int64_t batch = 8;
  int64_t resolution = 224;
  int64_t num_classes = 1000;
  double width_mult = 1.0;
  int64_t round_nearest = 8;
  std::vector<InvertedResidualStage> stages;  // empty: torchvision's seven stages
  double dropout = 0.2;                       // classifier.0
  uint64_t seed = 0;
};
// torchvision's seven inverted-residual stages (t, c, n, s).
std::vector<InvertedResidualStage> mobilenet_v2_default_stages();
// Width 1.0 at 128x128, batch 8, 1000 classes: the configuration of the memory benchmarks.
MobileNetV2Config mobilenet_v2_config();
Result<Graph> mobilenet_v2(const MobileNetV2Config& config);

// ---- ResNet-18 (torchvision.models.resnet18) ---------------------------------------------------
// Input "image" f32 [batch, 3, resolution, resolution]; output "logits" [batch, num_classes].
struct ResNetConfig {
  int64_t batch = 8;
  int64_t resolution = 224;
  int64_t num_classes = 1000;
  int64_t width = 64;                            // channels of conv1 and layer1 (doubling per stage)
  std::array<int64_t, 4> blocks = {2, 2, 2, 2};  // BasicBlocks per stage
  uint64_t seed = 0;
};
ResNetConfig resnet18_config();  // 224x224, batch 8, 1000 classes
Result<Graph> resnet18(const ResNetConfig& config);

// ---- BERT encoder + sequence classification (transformers BertModel names) ---------------------
// Inputs "input_ids" i64 [batch, seq_len]; optional "attention_mask" i64 [batch, seq_len] (1 =
// attend, 0 = padding) and "token_type_ids" i64 [batch, seq_len] (absent: all segment 0).
// Output "logits" [batch, num_labels] from classifier(dropout(tanh(pooler.dense(h[:, 0])))), as
// BertForSequenceClassification computes it (its "bert." prefix dropped: names are BertModel's).
// num_labels 0 builds BertModel alone: outputs "last_hidden_state" [batch, seq_len, hidden_size]
// and, with `pooler`, "pooler_output" [batch, hidden_size] = tanh(pooler.dense(h[:, 0])).
struct BertConfig {
  int64_t batch = 8;
  int64_t seq_len = 128;
  int64_t vocab_size = 30522;
  int64_t hidden_size = 384;
  int64_t num_layers = 6;
  int64_t num_heads = 12;
  int64_t intermediate_size = 1536;
  int64_t max_position_embeddings = 512;
  int64_t type_vocab_size = 2;
  double layer_norm_eps = 1e-12;
  double hidden_dropout = 0.1;     // embeddings, attention output, FFN output, classifier
  double attention_dropout = 0.1;  // attention probabilities
  int64_t num_labels = 2;       // 0: no classification head (see above)
  bool pooler = true;           // BertModel's pooler; a classification head needs it
  bool attention_mask = false;  // adds the "attention_mask" input
  bool token_type_ids = false;  // adds the "token_type_ids" input
  int64_t pad_token_id = 0;     // its word-embedding row starts at zero, as in transformers
  double initializer_range = 0.02;
  uint64_t seed = 0;
};
BertConfig minilm_l6_config();  // all-MiniLM-L6-v2's encoder: 6 x 384, 12 heads, seq 128, batch 8
Result<Graph> bert_classifier(const BertConfig& config);

// ---- LLaMA decoder (transformers LlamaForCausalLM names) ---------------------------------------
// Input "input_ids" i64 [batch, seq_len]; output "logits" [batch, seq_len, vocab_size] for
// token-level cross-entropy (the caller shifts labels: label[s] = input_ids[s + 1], -100 last).
struct LlamaConfig {
  int64_t batch = 1;
  int64_t seq_len = 256;
  int64_t vocab_size = 49152;
  int64_t hidden_size = 576;
  int64_t num_layers = 30;
  int64_t num_heads = 9;
  int64_t num_kv_heads = 3;  // grouped-query attention: num_heads / num_kv_heads queries per KV head
  int64_t intermediate_size = 1536;
  double rms_norm_eps = 1e-5;
  double rope_theta = 100000.0;
  bool tie_word_embeddings = true;  // lm_head reuses model.embed_tokens.weight (no lm_head.weight)
  double initializer_range = 0.02;
  uint64_t seed = 0;
  // > 0: the graph also has a "decode" function (Graph::functions) for generation: inputs
  // "decode.input_ids" i64 [decode_batch, 1] and "decode.position" i64 [1] (the token's position),
  // output "decode.logits" [decode_batch, 1, vocab_size], each layer's keys and values kept in
  // caches of decode_cache positions (state, not checkpointed). Same weights as the forward.
  int64_t decode_cache = 0;
  int64_t decode_batch = 1;
};
LlamaConfig smollm2_135m_config();  // SmolLM2-135M: 30 x 576, 9 heads / 3 KV heads, tied; batch 1, seq 256
Result<Graph> llama_causal_lm(const LlamaConfig& config);

// ---- weights by name ---------------------------------------------------------------------------
// Values in row-major order, as a PyTorch state_dict's tensors flattened.
using WeightMap = std::map<std::string, std::vector<float>>;

struct LoadWeightsOptions {
  bool require_all = false;  // every parameter and state tensor of the graph must be in the map
};

// Replaces the initial values of the graph's parameters and state tensors (BatchNorm running
// statistics) by name. A name the graph does not have is an error, except PyTorch's
// "*.num_batches_tracked" counters, which PockEngine does not keep; so is a value count that does
// not match the tensor's shape. On error the graph is unchanged.
Status load_weights(Graph& graph, const WeightMap& weights, const LoadWeightsOptions& options = {});

}  // namespace pock::models
