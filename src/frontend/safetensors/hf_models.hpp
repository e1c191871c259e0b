// One importer per architecture: a config.json and the checkpoint's tensors into the model zoo's
// graph. Each checks the configuration against what its builder can express and every tensor the
// configuration implies (name and shape) before it builds anything.
#pragma once
#include "frontend/safetensors/checkpoint.hpp"
#include "frontend/safetensors/hf_config.hpp"
#include "pock/compiler/graph.hpp"
#include "pock/compiler/safetensors.hpp"

namespace pock::hf {

// The sizes every transformers config names alike, into a zoo config (LlamaConfig, BertConfig)
// with the caller's batch and sequence length.
template <typename ZooConfig>
Status read_common_sizes(const HfConfig& config, const HfImportOptions& o, ZooConfig* c) {
  c->batch = o.batch;
  c->seq_len = o.seq_len;
  POCK_ASSIGN_OR_RETURN(c->vocab_size, config.size("vocab_size"));
  POCK_ASSIGN_OR_RETURN(c->hidden_size, config.size("hidden_size"));
  POCK_ASSIGN_OR_RETURN(c->num_layers, config.size("num_hidden_layers"));
  POCK_ASSIGN_OR_RETURN(c->num_heads, config.size("num_attention_heads"));
  POCK_ASSIGN_OR_RETURN(c->intermediate_size, config.size("intermediate_size"));
  POCK_ASSIGN_OR_RETURN(c->initializer_range, config.number_or("initializer_range", 0.02));
  if (!(c->initializer_range >= 0.0)) return Status(Code::kInvalidArgument, "config.json: initializer_range must be >= 0");
  return Status::ok();
}

Result<Graph> llama_from_hf(const HfConfig& config, const Checkpoint& checkpoint, const HfImportOptions& options);
Result<Graph> bert_from_hf(const HfConfig& config, const Checkpoint& checkpoint, const HfImportOptions& options);

}  // namespace pock::hf
