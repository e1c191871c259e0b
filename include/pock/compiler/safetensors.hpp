// Hugging Face checkpoints (a folder with config.json and model.safetensors, or shards listed in
// model.safetensors.index.json) into a Graph: the same graph the model zoo's builders make
// (models.hpp), with the hyper-parameters from config.json and every weight converted to f32.
// Weights keep transformers' names. Architectures (config.json "model_type" / "architectures"):
//   - "llama" (LlamaForCausalLM): models::llama_causal_lm; input "input_ids" i64 [batch, seq_len],
//     output "logits" [batch, seq_len, vocab].
//   - "bert" (BertModel, BertForSequenceClassification; the "bert." prefix is optional):
//     models::bert_classifier; input "input_ids" i64 [batch, seq_len] (and "attention_mask",
//     "token_type_ids" when asked for); outputs by `num_labels` below.
// A configuration the builders cannot express (rope_scaling, biases in LLaMA's projections, an
// activation other than the builder's, ...) is refused by name, as is a dtype other than F32,
// F16 and BF16, and every tensor the configuration implies is checked (name and shape) before a
// graph of that size is built.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "pock/compiler/graph.hpp"
#include "pock/status.hpp"

namespace pock {

struct HfImportOptions {
  int64_t batch = 1;
  int64_t seq_len = 128;
  // BERT: -1 takes what the checkpoint has (a BertForSequenceClassification's classifier, else
  // the encoder alone); 0 the encoder alone: outputs "last_hidden_state" [batch, seq_len, hidden]
  // and, when the checkpoint has pooler weights, "pooler_output" [batch, hidden]; > 0 a
  // classifier of that many labels, output "logits" [batch, num_labels]: the checkpoint's when it
  // has one of that size, else a fresh one initialized as transformers does (normal(0,
  // initializer_range), zero bias). Ignored for LLaMA.
  int64_t num_labels = -1;
  // BERT: add the "attention_mask" / "token_type_ids" inputs (i64 [batch, seq_len]).
  bool attention_mask = false;
  bool token_type_ids = false;
  // LLaMA: > 0 adds a "decode" function with a KV cache of this many positions, for generation
  // (models::LlamaConfig::decode_cache).
  int64_t decode_cache = 0;
};

Result<Graph> import_hf_folder(const std::string& folder, const HfImportOptions& options = {});

// One unsharded checkpoint in memory: config.json's text and a safetensors file's bytes (for
// fuzzing, and for callers that hold the files already).
Result<Graph> import_hf_bytes(const std::string& config_json, const uint8_t* safetensors, size_t size,
                              const HfImportOptions& options = {});

}  // namespace pock
