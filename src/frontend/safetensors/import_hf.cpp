// import_hf_folder / import_hf_bytes: config.json picks the architecture, the checkpoint's
// tensors fill its graph (hf_models.hpp).
#include <filesystem>

#include "frontend/safetensors/checkpoint.hpp"
#include "frontend/safetensors/hf_config.hpp"
#include "frontend/safetensors/hf_models.hpp"
#include "frontend/safetensors/untrusted_json.hpp"
#include "pock/compiler/safetensors.hpp"

namespace pock {
namespace {

Result<Graph> import_checkpoint(const hf::HfConfig& config, const hf::Checkpoint& checkpoint, const HfImportOptions& o) {
  if (o.batch < 1 || o.seq_len < 1 || o.decode_cache < 0) {
    return Status(Code::kInvalidArgument, "Hugging Face import: batch and seq_len must be >= 1, decode_cache >= 0");
  }
  const std::string type = config.model_type();
  if (type == "llama") return hf::llama_from_hf(config, checkpoint, o);
  if (o.decode_cache > 0) return Status(Code::kInvalidArgument, "a decode function (KV cache) needs a causal language model (llama)");
  if (type == "bert") return hf::bert_from_hf(config, checkpoint, o);
  return Status(Code::kUnsupportedOp, "config.json: model_type '" + type + "' (architecture '" + config.architecture() +
                                          "') is not supported (llama, bert)");
}

}  // namespace

Result<Graph> import_hf_bytes(const std::string& config_json, const uint8_t* safetensors, size_t size,
                              const HfImportOptions& options) {
  POCK_ASSIGN_OR_RETURN(const hf::HfConfig config, hf::HfConfig::parse(config_json.data(), config_json.size()));
  POCK_ASSIGN_OR_RETURN(const hf::Checkpoint checkpoint, hf::Checkpoint::from_bytes(safetensors, size, "model.safetensors"));
  return import_checkpoint(config, checkpoint, options);
}

Result<Graph> import_hf_folder(const std::string& folder, const HfImportOptions& options) {
  auto prefixed = [&](const Status& s) { return Status(s.code(), folder + ": " + s.message()); };
  const std::string config_path = (std::filesystem::path(folder) / "config.json").string();
  auto json = hf::read_untrusted_json_file(config_path);
  if (!json.is_ok()) return prefixed(json.status());
  auto config = hf::HfConfig::from_json(std::move(json.value()));
  if (!config.is_ok()) return prefixed(config.status());
  auto checkpoint = hf::Checkpoint::open_folder(folder);
  if (!checkpoint.is_ok()) return prefixed(checkpoint.status());
  auto graph = import_checkpoint(config.value(), checkpoint.value(), options);
  if (!graph.is_ok()) return prefixed(graph.status());
  return graph;
}

}  // namespace pock
