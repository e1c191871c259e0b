#include "tools/lora_weights.hpp"

#include <cstdio>
#include <cstring>

#include "pock/compiler/lora.hpp"

namespace pock::tools {
namespace {

Result<std::vector<float>> f32_values(const NpzFile& arrays, const std::string& name) {
  const auto it = arrays.find(name);
  if (it == arrays.end()) {
    return Status(Code::kNotFound, "--merge-lora: the blob has no parameter '" + name +
                                       "' (frozen weights kept quantized leave the blob: merge into the source model with "
                                       "pockc export --gguf SOURCE.gguf --lora-alpha ALPHA instead)");
  }
  if (it->second.descr != "<f4") {
    return Status(Code::kInvalidArgument, "--merge-lora: '" + name + "' is " + it->second.descr +
                                              ", not f32 (a frozen weight kept quantized cannot take its adapter)");
  }
  std::vector<float> v(it->second.data.size() / sizeof(float));
  std::memcpy(v.data(), it->second.data.data(), v.size() * sizeof(float));
  return v;
}

}  // namespace

Status merge_lora_arrays(const nlohmann::json& metadata, NpzFile* arrays) {
  POCK_ASSIGN_OR_RETURN(const std::vector<LoraModule> modules, lora_modules_from_metadata(metadata.dump()));
  if (modules.empty()) return Status(Code::kInvalidArgument, "--merge-lora: the blob was compiled without LoRA adapters");
  models::WeightMap weights;
  for (const LoraModule& m : modules) {
    for (const std::string& name : {m.name + ".weight", m.name + ".lora_A.weight", m.name + ".lora_B.weight"}) {
      POCK_ASSIGN_OR_RETURN(weights[name], f32_values(*arrays, name));
    }
  }
  POCK_RETURN_IF_ERROR(merge_lora(weights, modules));
  for (const LoraModule& m : modules) {
    arrays->erase(m.name + ".lora_A.weight");
    arrays->erase(m.name + ".lora_B.weight");
    const std::vector<float>& w = weights.at(m.name + ".weight");
    std::memcpy((*arrays)[m.name + ".weight"].data.data(), w.data(), w.size() * sizeof(float));
  }
  return Status::ok();
}

std::string lora_summary(const nlohmann::ordered_json& lora) {
  if (!lora.is_object() || !lora.contains("modules")) return "";
  const nlohmann::ordered_json& modules = lora["modules"];
  std::string names;
  for (size_t i = 0; i < modules.size() && i < 4; ++i) names += (i ? ", " : "") + modules[i].value("name", std::string("?"));
  if (modules.size() > 4) names += ", ... (" + std::to_string(modules.size() - 4) + " more)";
  char head[160];
  std::snprintf(head, sizeof(head), "LoRA: rank %lld, alpha %g%s (scaling %g), dropout %g, %zu modules: ",
                static_cast<long long>(lora.value("rank", 0)), lora.value("alpha", 0.0), lora.value("use_rslora", false) ? ", rslora" : "",
                lora.value("scaling", 0.0), lora.value("dropout", 0.0), modules.size());
  return head + names;
}

}  // namespace pock::tools
