// GGUF checkpoints (llama.cpp's format) into a Graph: the LLaMA architecture, with the
// hyper-parameters from the file's metadata and every weight converted to f32, named as
// transformers' LlamaForCausalLM names them (models::llama_causal_lm builds the same graph).
// Input "input_ids" i64 [batch, seq_len]; output "logits" [batch, seq_len, vocab].
#pragma once
#include <cstdint>
#include <string>

#include "pock/compiler/graph.hpp"
#include "pock/status.hpp"

namespace pock {

struct GgufImportOptions {
  int64_t batch = 1;
  int64_t seq_len = 128;
};

Result<Graph> import_gguf(const std::string& path, const GgufImportOptions& options = {});
Result<Graph> import_gguf_bytes(const uint8_t* data, size_t size, const GgufImportOptions& options = {});

}  // namespace pock
