// A transformers config.json: typed lookups whose errors name the key, and the refusals shared by
// the architectures (a setting the graph builders cannot express must fail the import, not be
// dropped silently).
#pragma once
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "pock/status.hpp"

namespace pock::hf {

class HfConfig {
 public:
  static Result<HfConfig> parse(const char* text, size_t size);
  static Result<HfConfig> from_json(nlohmann::json j);  // parsed by parse_untrusted_json

  // model_type, else what the first of "architectures" names ("LlamaForCausalLM" -> "llama").
  std::string model_type() const;
  // "architectures"[0], or "" without one.
  std::string architecture() const;

  // A size: an integer in [1, 2^24]; required, or `fallback` when absent or null.
  Result<int64_t> size(const char* key) const;
  Result<int64_t> size_or(const char* key, int64_t fallback) const;
  // An integer (may be negative or zero), a number, a boolean, a string: `fallback` when absent
  // or null.
  Result<int64_t> integer_or(const char* key, int64_t fallback) const;
  Result<double> number_or(const char* key, double fallback) const;
  Result<bool> flag_or(const char* key, bool fallback) const;
  Result<std::string> string_or(const char* key, const std::string& fallback) const;

  // Refusals: the key must be absent, null or false; or the string `expected` (`fallback` when absent).
  Status require_off(const char* key, const std::string& why) const;
  Status require_string(const char* key, const std::string& expected, const std::string& fallback) const;

  const nlohmann::json& json() const { return j_; }

 private:
  const nlohmann::json* get(const char* key) const;  // nullptr when absent or null
  nlohmann::json j_;
};

}  // namespace pock::hf
