// Text generation with a causal language model's blob, in the engine that trains it: the blob's
// inference function (input "input_ids" i64 [batch, seq], output "logits" f32 [batch, seq, vocab],
// as models::llama_causal_lm, import_gguf and Hugging Face's ONNX exports have them) runs the
// current weights, so text generated after train_step() follows the fine-tuned model without a
// reload.
//
//   pock::SamplingOptions s;
//   s.max_new_tokens = 40; s.temperature = 0.7; s.top_p = 0.9; s.seed = 1;
//   auto ids = pock::generate(engine, prompt_ids, s);
//
// A blob with a "decode" function (models::LlamaConfig::decode_cache, `pockc compile --kv-cache N`)
// generates through its KV cache: each token, of the prompt and then generated, is one decode run
// at its position (inputs "decode.input_ids" [batch, 1], "decode.position" [1]; output
// "decode.logits"), the sequence in row 0. Generation ends when the cache is full (the capacity
// is read from the LLaMA cache "model.layers.0.self_attn.key_cache").
//
// Otherwise (or with no_cache) each new token runs the inference function once over a window of
// the compiled sequence length: the sequence so far in row 0, padded on the right (a causal model
// never attends to positions after the one read), its logits read at the last real position. A
// sequence longer than the window keeps its last `seq` tokens; a token costs a forward pass over
// the whole window.
#pragma once
#include <cstdint>
#include <vector>

#include "pock/engine.hpp"
#include "pock/status.hpp"

namespace pock {

struct SamplingOptions {
  int64_t max_new_tokens = 32;
  double temperature = 0.0;  // 0: greedy (the most likely token; the lowest id among equals)
  double top_p = 1.0;        // nucleus sampling: draw among the most likely tokens whose probabilities reach top_p
  uint64_t seed = 0;         // the draws are a function of the seed alone (same on every platform)
  std::vector<int64_t> stop_tokens;  // generation ends after emitting one of these
  int64_t pad_token = 0;             // fills the window past the sequence, and the decode batch's other rows
  bool no_cache = false;             // use the inference function even when the blob has a decode function
};

// Draws tokens from rows of logits; `seed` fixes the sequence of draws.
class TokenSampler {
 public:
  explicit TokenSampler(const SamplingOptions& options);
  // The next token from one row of `vocab` logits. Errors: a NaN logit, an empty row.
  Result<int64_t> next(const float* logits, int64_t vocab);

 private:
  double uniform();  // [0, 1)
  SamplingOptions options_;
  uint64_t state_;
  std::vector<std::pair<double, int64_t>> scratch_;
};

// The prompt followed by up to max_new_tokens generated tokens (fewer when a stop token comes).
Result<std::vector<int64_t>> generate(Engine& engine, const std::vector<int64_t>& prompt, const SamplingOptions& options);

}  // namespace pock
