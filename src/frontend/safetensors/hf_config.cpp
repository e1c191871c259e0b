#include "frontend/safetensors/hf_config.hpp"

#include <cctype>

#include "frontend/safetensors/untrusted_json.hpp"

namespace pock::hf {
namespace {

Status bad(const std::string& what) { return Status(Code::kInvalidArgument, "config.json: " + what); }

// A value for a message: short, and never throwing on odd text.
std::string shown(const nlohmann::json& v) {
  const std::string text = v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return text.size() <= 80 ? text : text.substr(0, 77) + "...";
}

}  // namespace

Result<HfConfig> HfConfig::parse(const char* text, size_t size) {
  POCK_ASSIGN_OR_RETURN(nlohmann::json j, parse_untrusted_json(text, size, "config.json"));
  return from_json(std::move(j));
}

Result<HfConfig> HfConfig::from_json(nlohmann::json j) {
  if (!j.is_object()) return bad("not a JSON object");
  HfConfig c;
  c.j_ = std::move(j);
  return c;
}

const nlohmann::json* HfConfig::get(const char* key) const {
  const auto it = j_.find(key);
  return it == j_.end() || it->is_null() ? nullptr : &*it;
}

std::string HfConfig::architecture() const {
  const auto it = j_.find("architectures");
  if (it == j_.end() || !it->is_array() || it->empty() || !(*it)[0].is_string()) return "";
  return (*it)[0].get<std::string>();
}

std::string HfConfig::model_type() const {
  const auto it = j_.find("model_type");
  if (it != j_.end() && it->is_string()) return it->get<std::string>();
  // transformers' class names start with the model's: "BertForSequenceClassification" -> "bert".
  const std::string arch = architecture();
  for (const char* prefix : {"Llama", "Bert"}) {
    if (arch.rfind(prefix, 0) == 0) {
      std::string type = prefix;
      for (char& ch : type) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      return type;
    }
  }
  return "";
}

Result<int64_t> HfConfig::size(const char* key) const {
  if (!get(key)) return bad(std::string("'") + key + "' is missing");
  return size_or(key, 0);
}

Result<int64_t> HfConfig::size_or(const char* key, int64_t fallback) const {
  POCK_ASSIGN_OR_RETURN(const int64_t v, integer_or(key, fallback));
  if (v < 1 || v > (int64_t{1} << 24)) return bad(std::string("'") + key + "' = " + std::to_string(v) + " is out of range");
  return v;
}

Result<int64_t> HfConfig::integer_or(const char* key, int64_t fallback) const {
  const nlohmann::json* v = get(key);
  if (!v) return fallback;
  if (v->is_number_unsigned()) {
    if (v->get<uint64_t>() > uint64_t{1} << 62) return bad(std::string("'") + key + "' is out of range");
    return static_cast<int64_t>(v->get<uint64_t>());
  }
  if (!v->is_number_integer()) return bad(std::string("'") + key + "' is not an integer");
  return v->get<int64_t>();
}

Result<double> HfConfig::number_or(const char* key, double fallback) const {
  const nlohmann::json* v = get(key);
  if (!v) return fallback;
  if (!v->is_number()) return bad(std::string("'") + key + "' is not a number");
  return v->get<double>();
}

Result<bool> HfConfig::flag_or(const char* key, bool fallback) const {
  const nlohmann::json* v = get(key);
  if (!v) return fallback;
  if (!v->is_boolean()) return bad(std::string("'") + key + "' is not true or false");
  return v->get<bool>();
}

Result<std::string> HfConfig::string_or(const char* key, const std::string& fallback) const {
  const nlohmann::json* v = get(key);
  if (!v) return fallback;
  if (!v->is_string()) return bad(std::string("'") + key + "' is not a string");
  return v->get<std::string>();
}

Status HfConfig::require_off(const char* key, const std::string& why) const {
  const nlohmann::json* v = get(key);
  if (!v || (v->is_boolean() && !v->get<bool>())) return Status::ok();
  return Status(Code::kUnsupportedOp, std::string("config.json: '") + key + "' = " + shown(*v) + " is not supported (" + why + ")");
}

Status HfConfig::require_string(const char* key, const std::string& expected, const std::string& fallback) const {
  POCK_ASSIGN_OR_RETURN(const std::string v, string_or(key, fallback));
  if (v == expected) return Status::ok();
  return Status(Code::kUnsupportedOp, std::string("config.json: '") + key + "' = \"" + v + "\" is not supported (only \"" +
                                          expected + "\")");
}

}  // namespace pock::hf
