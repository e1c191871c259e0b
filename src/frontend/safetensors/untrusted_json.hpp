// JSON text from a file someone else wrote (a safetensors header, config.json, a shard index),
// parsed without exceptions. Beyond syntax, a key repeated inside one object is an error:
// nlohmann keeps the last value silently, and a file whose readers disagree on which value
// counts (the same tensor listed twice with different offsets) must not load. Nesting is bounded
// so that a hostile header cannot make the document deep.
#pragma once
#include <cstddef>
#include <string>

#include <nlohmann/json.hpp>

#include "pock/status.hpp"

namespace pock::hf {

// `what` names the text in errors ("config.json", "'model.safetensors' header").
Result<nlohmann::json> parse_untrusted_json(const char* text, size_t size, const std::string& what);

// A JSON file of at most 16 MiB (configs and indexes are kilobytes), parsed as above.
Result<nlohmann::json> read_untrusted_json_file(const std::string& path);

}  // namespace pock::hf
