#include "tools/blob_metadata.hpp"

#include <functional>

namespace pock::tools {
namespace {

using Json = nlohmann::json;
using Check = std::function<bool(const Json&)>;

bool is_count(const Json& j) {
  return j.is_number_unsigned() || (j.is_number_integer() && j.get<int64_t>() >= 0);
}

// An object whose listed members, where present, pass their checks; members not listed pass.
Check object_of(std::vector<std::pair<const char*, Check>> members) {
  return [members = std::move(members)](const Json& j) {
    if (!j.is_object()) return false;
    for (const auto& [key, check] : members) {
      if (j.contains(key) && !check(j.at(key))) return false;
    }
    return true;
  };
}

Check object_of_counts() {
  return [](const Json& j) {
    if (!j.is_object()) return false;
    for (const auto& item : j.items()) {
      if (!is_count(item.value())) return false;
    }
    return true;
  };
}

Check array_of(Check element) {
  return [element = std::move(element)](const Json& j) {
    if (!j.is_array()) return false;
    for (const Json& e : j) {
      if (!element(e)) return false;
    }
    return true;
  };
}

const Check kString = [](const Json& j) { return j.is_string(); };
const Check kCount = is_count;
const Check kNumber = [](const Json& j) { return j.is_number(); };
const Check kBool = [](const Json& j) { return j.is_boolean(); };

// Every metadata field a pockc command reads, with its type (emit.cpp writes them).
const std::vector<std::pair<const char*, Check>>& known_fields() {
  static const std::vector<std::pair<const char*, Check>> fields = {
      {"producer", kString},
      {"op_phases", kString},
      {"memory", object_of_counts()},
      {"backend_choice", object_of({{"profile", kString},
                                    {"profiled_ops", kCount},
                                    {"requested_ops", kCount},
                                    {"heuristic_ops", kCount},
                                    {"undecided_ops", kCount}})},
      {"memory_spaces",
       array_of(object_of({{"backend", kString}, {"arena_bytes", kCount}, {"persistent_bytes", kCount}}))},
      {"lora", object_of({{"rank", kCount}, {"alpha", kNumber}, {"use_rslora", kBool}, {"scaling", kNumber}, {"dropout", kNumber},
                          {"modules", array_of(object_of({{"name", kString}, {"in", kCount}, {"out", kCount}, {"rank", kCount},
                                                          {"scaling", kNumber}}))}})},
  };
  return fields;
}

}  // namespace

nlohmann::json checked_metadata(const std::string& text, std::vector<std::string>* dropped) {
  Json metadata = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (metadata.is_discarded() || !metadata.is_object()) {
    if (!text.empty()) dropped->push_back("the metadata is not a JSON object");
    return Json::object();
  }
  for (const auto& [key, check] : known_fields()) {
    if (metadata.contains(key) && !check(metadata.at(key))) {
      dropped->push_back("metadata field '" + std::string(key) + "' has the wrong type");
      metadata.erase(key);
    }
  }
  return metadata;
}

}  // namespace pock::tools
