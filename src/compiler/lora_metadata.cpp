// The blob's record of its LoRA adapters: the metadata member "lora" (docs/blob-format.md),
// written by compile() and read back by export tools. Read as untrusted input: a blob's
// checksums say its bytes are as written, not who wrote them.
#include <cmath>

#include <nlohmann/json.hpp>

#include "compiler/lowering/lora.hpp"

namespace pock {

std::string lora_metadata_json(const Recipe::Lora& lora, const std::vector<LoraModule>& modules) {
  nlohmann::ordered_json j;
  j["rank"] = lora.rank;
  j["alpha"] = lora.alpha;
  j["use_rslora"] = lora.use_rslora;
  j["scaling"] = lora.scaling();
  j["dropout"] = lora.dropout;
  j["target_modules"] = lora.target_modules;
  j["layers"] = lora.layers;
  j["modules"] = nlohmann::ordered_json::array();
  for (const LoraModule& m : modules) {
    j["modules"].push_back({{"name", m.name}, {"in", m.in}, {"out", m.out}, {"rank", m.rank}, {"scaling", m.scaling}});
  }
  return j.dump();
}

Result<std::vector<LoraModule>> lora_modules_from_metadata(std::string_view metadata_json) {
  const auto metadata = nlohmann::json::parse(metadata_json.begin(), metadata_json.end(), nullptr, /*allow_exceptions=*/false);
  if (metadata.is_discarded() || !metadata.is_object()) return Status(Code::kInvalidArgument, "the blob's metadata is not a JSON object");
  std::vector<LoraModule> modules;
  if (!metadata.contains("lora")) return modules;
  const auto bad = [](const std::string& what) { return Status(Code::kInvalidArgument, "the blob's LoRA record: " + what); };
  const nlohmann::json& lora = metadata["lora"];
  if (!lora.is_object() || !lora.contains("modules") || !lora["modules"].is_array()) return bad("no list of modules");
  for (const nlohmann::json& m : lora["modules"]) {
    const auto count = [&](const char* key) { return m.contains(key) && m[key].is_number_integer() && m[key].get<int64_t>() > 0; };
    if (!m.is_object() || !m.contains("name") || !m["name"].is_string() || !count("in") || !count("out") || !count("rank") ||
        !m.contains("scaling") || !m["scaling"].is_number() || !std::isfinite(m["scaling"].get<double>())) {
      return bad("module " + std::to_string(modules.size()) + " lacks a name, in, out, rank or a finite scaling");
    }
    modules.push_back(LoraModule{m["name"].get<std::string>(), m["in"].get<int64_t>(), m["out"].get<int64_t>(),
                                 m["rank"].get<int64_t>(), m["scaling"].get<double>()});
  }
  return modules;
}

}  // namespace pock
