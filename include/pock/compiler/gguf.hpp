// GGUF checkpoints (llama.cpp's format) into a Graph: the LLaMA architecture, with the
// hyper-parameters from the file's metadata and every weight converted to f32, named as
// transformers' LlamaForCausalLM names them (models::llama_causal_lm builds the same graph).
// Input "input_ids" i64 [batch, seq_len]; output "logits" [batch, seq_len, vocab].
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "pock/compiler/graph.hpp"
#include "pock/compiler/models.hpp"
#include "pock/status.hpp"

namespace pock {

struct GgufImportOptions {
  int64_t batch = 1;
  int64_t seq_len = 128;
  // > 0: a "decode" function with a KV cache of this many positions, for generation
  // (models::LlamaConfig::decode_cache).
  int64_t decode_cache = 0;
  // Keeps each Q8_0/Q4_0/Q4_1/Q4_K/Q6_K weight's blocks beside its f32 values
  // (TensorDesc::source_blocks), so that recipe frozen_weights "source" runs frozen weights on
  // them without re-quantizing; about a sixth of the f32 bytes more while compiling.
  bool keep_source_blocks = true;
};

Result<Graph> import_gguf(const std::string& path, const GgufImportOptions& options = {});
Result<Graph> import_gguf_bytes(const uint8_t* data, size_t size, const GgufImportOptions& options = {});

// ---- export: a fine-tuned model back to GGUF, for llama.cpp ------------------------------------
struct GgufExportOptions {
  // The ggml type of each weight that differs from the source file: "f32" (exact), "f16", "bf16",
  // "q8_0", "q4_0" or "q4_1" (re-quantized: smaller, but a quantization step can exceed what
  // fine-tuning changed).
  std::string changed_type = "f32";
  // Every tensor written as `changed_type`, changed or not (an f32 or f16 model for tools that
  // want one; llama.cpp then computes without quantized weights).
  bool convert_all = false;
  // LoRA adapter pairs in `weights` ("<module>.lora_A.weight" [rank, in], "<module>.lora_B.weight"
  // [out, rank]) are merged into their module's weight, W + alpha / rank * B A, with this alpha
  // (peft's lora_alpha); 0 refuses adapters.
  double lora_alpha = 0.0;
};

struct GgufExportReport {
  std::vector<std::string> replaced;  // GGUF names of the tensors written from `weights`
  int64_t kept = 0;                   // tensors copied byte for byte from the source
  uint64_t file_bytes = 0;
};

// Writes the llama GGUF file `source_path` to `out_path` (atomically) with `weights`
// (transformers names, f32 row-major: a trained model's parameters, e.g. `pockc train
// --save-weights`) in place of the source's tensors. A weight equal to the source tensor's
// dequantized values keeps the source's bytes, so frozen quantized weights stay exactly as they
// were; the others are written as `changed_type`, q_proj/k_proj rows in llama.cpp's order. The
// metadata (hyper-parameters, tokenizer) is carried over unchanged. A weight that the source does
// not have (by name or by size) is an error naming it. Adapter pairs are merged (lora_alpha).
Status export_gguf(const std::string& source_path, const models::WeightMap& weights, const std::string& out_path,
                   const GgufExportOptions& options = {}, GgufExportReport* report = nullptr);

// A LoRA adapter in llama.cpp's adapter format (general.type "adapter", adapter.type "lora",
// adapter.lora.alpha; tensors "blk.N.attn_q.weight.lora_a" / ".lora_b"), loadable next to
// `source_path` (llama.cpp's --lora). `adapters` holds peft-named pairs
// "<module>.lora_A.weight" [rank, in] and "<module>.lora_B.weight" [out, rank] for modules of the
// source model ("model.layers.3.self_attn.q_proj"); llama.cpp scales them by alpha / rank.
Status export_gguf_lora_adapter(const std::string& source_path, const models::WeightMap& adapters, double alpha,
                                const std::string& out_path, GgufExportReport* report = nullptr);

}  // namespace pock
