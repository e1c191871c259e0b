#include "pock/generate.hpp"
#include "ir/splitmix64.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <string>

namespace pock {

TokenSampler::TokenSampler(const SamplingOptions& options) : options_(options), state_(options.seed) {}

// splitmix64, so that a seed gives the same text everywhere.
double TokenSampler::uniform() { return unit_interval(splitmix64_next(state_)); }

Result<int64_t> TokenSampler::next(const float* logits, int64_t vocab) {
  if (vocab < 1) return Status(Code::kInvalidArgument, "sampling: an empty row of logits");
  int64_t best = 0;
  for (int64_t i = 0; i < vocab; ++i) {
    if (std::isnan(logits[i])) return Status(Code::kNumerical, "sampling: logit " + std::to_string(i) + " is NaN");
    if (logits[i] > logits[best]) best = i;
  }
  // Greedy, or an infinite logit that takes all the probability.
  if (options_.temperature <= 0.0 || options_.top_p <= 0.0 || std::isinf(logits[best])) return best;
  // Softmax of logits / temperature, in double, shifted by the maximum.
  scratch_.resize(static_cast<size_t>(vocab));
  double total = 0.0;
  for (int64_t i = 0; i < vocab; ++i) {
    const double p = std::exp((double(logits[i]) - double(logits[best])) / options_.temperature);
    scratch_[static_cast<size_t>(i)] = {p, i};
    total += p;
  }
  // The nucleus: the most likely tokens, in order, until their mass reaches top_p (at least one).
  size_t keep = scratch_.size();
  double mass = total;
  if (options_.top_p < 1.0) {
    std::sort(scratch_.begin(), scratch_.end(), [](const auto& a, const auto& b) { return a.first > b.first || (a.first == b.first && a.second < b.second); });
    mass = 0.0;
    keep = 0;
    while (keep < scratch_.size() && (keep == 0 || mass < options_.top_p * total)) mass += scratch_[keep++].first;
  }
  double u = uniform() * mass;
  for (size_t i = 0; i < keep; ++i) {
    u -= scratch_[i].first;
    if (u < 0.0) return scratch_[i].second;
  }
  return scratch_[keep - 1].second;  // rounding left u at the very end of the mass
}

namespace {

Status check_prompt(const std::vector<int64_t>& prompt, const SamplingOptions& options, int64_t vocab) {
  if (prompt.empty()) return Status(Code::kInvalidArgument, "generate: the prompt is empty (start with a BOS token)");
  if (options.max_new_tokens < 0) return Status(Code::kInvalidArgument, "generate: max_new_tokens must be >= 0");
  for (int64_t t : prompt) {
    if (t < 0 || t >= vocab) return Status(Code::kInvalidArgument, "generate: prompt token " + std::to_string(t) + " is outside the vocabulary");
  }
  return Status::ok();
}

bool is_stop(const SamplingOptions& options, int64_t token) {
  return std::find(options.stop_tokens.begin(), options.stop_tokens.end(), token) != options.stop_tokens.end();
}

// One decode run per token: the prompt's tokens enter the KV cache one position at a time, then
// each sampled token does; row 0 of the decode batch carries the sequence.
Result<std::vector<int64_t>> generate_with_cache(Engine& engine, const std::vector<int64_t>& prompt, const SamplingOptions& options) {
  POCK_ASSIGN_OR_RETURN(const pock_tensor_info ids_info, engine.info("decode.input_ids"));
  POCK_ASSIGN_OR_RETURN(const pock_tensor_info logits_info, engine.info("decode.logits"));
  if (ids_info.dtype != POCK_I64 || ids_info.rank != 2 || ids_info.dims[1] != 1 || logits_info.rank != 3 ||
      logits_info.dtype != POCK_F32) {
    return Status(Code::kInvalidArgument, "generate: the decode function must take decode.input_ids i64 [batch, 1] and give decode.logits f32 [batch, 1, vocab]");
  }
  const int64_t batch = ids_info.dims[0], vocab = logits_info.dims[2];
  POCK_RETURN_IF_ERROR(check_prompt(prompt, options, vocab));
  int64_t capacity = INT64_MAX;
  if (auto cache = engine.info("model.layers.0.self_attn.key_cache"); cache.is_ok() && cache->rank == 4) capacity = cache->dims[2];
  std::vector<int64_t> tokens = prompt, ids(static_cast<size_t>(batch), options.pad_token), at(1, 0);
  std::vector<float> logits(static_cast<size_t>(batch * vocab));
  TokenSampler sampler(options);
  const int64_t end = static_cast<int64_t>(prompt.size()) + options.max_new_tokens;
  for (int64_t position = 0; position + 1 < end && position < capacity; ++position) {
    ids[0] = tokens[static_cast<size_t>(position)];
    POCK_RETURN_IF_ERROR(engine.set_input("decode.input_ids", ids));
    at[0] = position;
    POCK_RETURN_IF_ERROR(engine.set_input("decode.position", at));
    POCK_RETURN_IF_ERROR(engine.run("decode"));
    if (position + 1 < static_cast<int64_t>(tokens.size())) continue;  // still reading the prompt
    POCK_RETURN_IF_ERROR(engine.get_output("decode.logits", logits.data(), logits.size() * sizeof(float)));
    POCK_ASSIGN_OR_RETURN(const int64_t next, sampler.next(logits.data(), vocab));
    tokens.push_back(next);
    if (is_stop(options, next)) break;
  }
  return tokens;
}

}  // namespace

Result<std::vector<int64_t>> generate(Engine& engine, const std::vector<int64_t>& prompt, const SamplingOptions& options) {
  if (engine.has_function("decode") && !options.no_cache) return generate_with_cache(engine, prompt, options);
  POCK_ASSIGN_OR_RETURN(const pock_tensor_info ids_info, engine.info("input_ids"));
  POCK_ASSIGN_OR_RETURN(const pock_tensor_info logits_info, engine.info("logits"));
  if (ids_info.dtype != POCK_I64 || ids_info.rank != 2 || logits_info.dtype != POCK_F32 || logits_info.rank != 3 ||
      logits_info.dims[0] != ids_info.dims[0] || logits_info.dims[1] != ids_info.dims[1]) {
    return Status(Code::kInvalidArgument,
                  "generate: the blob must take input_ids i64 [batch, seq] and give logits f32 [batch, seq, vocab]");
  }
  const int64_t batch = ids_info.dims[0], seq = ids_info.dims[1], vocab = logits_info.dims[2];
  POCK_RETURN_IF_ERROR(check_prompt(prompt, options, vocab));
  std::vector<int64_t> tokens = prompt, window(static_cast<size_t>(batch * seq));
  std::vector<float> logits(static_cast<size_t>(batch * seq * vocab));
  TokenSampler sampler(options);
  for (int64_t n = 0; n < options.max_new_tokens; ++n) {
    const int64_t len = std::min<int64_t>(static_cast<int64_t>(tokens.size()), seq);
    std::fill(window.begin(), window.end(), options.pad_token);
    std::copy(tokens.end() - len, tokens.end(), window.begin());
    POCK_RETURN_IF_ERROR(engine.set_input("input_ids", window));
    POCK_RETURN_IF_ERROR(engine.infer());
    POCK_RETURN_IF_ERROR(engine.get_output("logits", logits.data(), logits.size() * sizeof(float)));
    POCK_ASSIGN_OR_RETURN(const int64_t next, sampler.next(logits.data() + (len - 1) * vocab, vocab));
    tokens.push_back(next);
    if (is_stop(options, next)) break;
  }
  return tokens;
}

}  // namespace pock
