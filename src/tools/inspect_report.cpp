#include "tools/inspect_report.hpp"

#include <map>
#include <string_view>

#include "ir/conv_algorithm.hpp"
#include "runtime/backend_set.hpp"
#include "runtime/engine_core.hpp"
#include "tools/op_flops.hpp"
#include "tools/quantized_weights_report.hpp"

namespace pock::tools {
namespace {

using Json = nlohmann::ordered_json;

// A member of the blob's metadata, or {} when the compiler that wrote the blob did not record it.
Json metadata_member(const BlobContents& blob, const char* key) {
  return blob.metadata.contains(key) ? Json::parse(blob.metadata.at(key).dump()) : Json::object();
}

Json flops_by_phase(const BlobContents& blob, const FunctionSpec& fn, const std::vector<int64_t>& op_flop) {
  int64_t by_phase[4] = {0, 0, 0, 0};
  for (uint32_t op : fn.ops) by_phase[static_cast<int>(blob.op_phases[op])] += op_flop[op];
  Json j;
  int64_t total = 0;
  for (Phase p : kAllPhases) {
    j[phase_name(p)] = by_phase[static_cast<int>(p)];
    total += by_phase[static_cast<int>(p)];
  }
  j["total"] = total;
  return j;
}

Json function_report(const BlobContents& blob, const FunctionSpec& fn, const std::vector<int64_t>& op_flop) {
  std::map<std::string, int64_t> counts;
  for (uint32_t op : fn.ops) ++counts[blob.spec.ops[op].op];
  Json j;
  j["name"] = fn.name;
  j["ops"] = fn.ops.size();
  j["arena_bytes"] = fn.arena_bytes;
  j["op_counts"] = counts;
  j["flops"] = flops_by_phase(blob, fn, op_flop);
  return j;
}

// Partial-channel updates train the leading `channels` rows of the weight's dimension 0.
Json parameters_report(const ProgramSpec& spec) {
  Json list = Json::array();
  int64_t count = 0, trainable = 0, elements = 0, trainable_elements = 0;
  for (const TensorSpec& t : spec.tensors) {
    if (t.kind != TensorKind::kParameter) continue;
    const int64_t n = numel(t.shape);
    const int64_t rows = t.shape.empty() ? 1 : t.shape[0];
    const int64_t channels = t.trainable ? (t.channels >= 0 ? t.channels : rows) : 0;
    const int64_t trained = rows > 0 ? n / rows * channels : 0;
    ++count;
    elements += n;
    trainable += t.trainable ? 1 : 0;
    trainable_elements += trained;
    Json p;
    p["name"] = t.name;
    p["dtype"] = dtype_name(t.dtype);
    p["shape"] = t.shape;
    p["trainable"] = t.trainable;
    p["channels"] = channels;  // leading rows of dimension 0 that train
    p["rows"] = rows;
    p["trainable_elements"] = trained;
    list.push_back(std::move(p));
  }
  Json j;
  j["count"] = count;
  j["trainable_count"] = trainable;
  j["elements"] = elements;
  j["trainable_elements"] = trainable_elements;
  j["list"] = std::move(list);
  return j;
}

Json memory_report(const BlobContents& blob) {
  Json j = metadata_member(blob, "memory");
  j["blob_arena_bytes"] = blob.spec.arena_bytes;
  j["blob_persistent_bytes"] = blob.spec.persistent_bytes;
  j["block_quantized_weights"] = quantized_weights_report(blob.spec);
  return j;
}

Json backends_report(const BlobContents& blob, const Binding& binding) {
  std::map<std::string, int64_t> preferred, bound;
  int64_t differs = 0;
  for (size_t i = 0; i < blob.spec.ops.size(); ++i) {
    const std::string& want = blob.spec.ops[i].backend;
    ++preferred[want.empty() ? "(none)" : want];
    if (i < binding.op_backends.size()) {
      ++bound[binding.op_backends[i]];
      differs += !want.empty() && want != binding.op_backends[i];
    }
  }
  Json j;
  j["available"] = builtin_backend_names();
  j["choice"] = metadata_member(blob, "backend_choice");
  j["preferred"] = preferred;
  j["bound"] = bound;
  j["bound_elsewhere"] = differs;  // ops whose preferred backend could not run them here
  j["bind_error"] = binding.error.empty() ? Json(nullptr) : Json(binding.error);
  j["loaded"] = Json::array();
  for (const Binding::Loaded& b : binding.backends) {
    Json entry = {{"name", b.name}, {"library", b.library}};
    if (!b.error.empty()) entry["error"] = b.error;
    j["loaded"].push_back(entry);
  }
  if (Json spaces = metadata_member(blob, "memory_spaces"); spaces.is_array()) j["memory_spaces"] = spaces;
  return j;
}

}  // namespace

Binding binding_of(const EngineCore& engine) {
  Binding binding;
  binding.op_backends = engine.op_backends();
  binding.workspace_bytes = static_cast<int64_t>(engine.workspace_bytes());
  for (const BackendEntry& e : engine.backend_entries()) {
    binding.backends.push_back({e.name, e.library, e.status.is_ok() ? "" : e.status.message()});
  }
  return binding;
}

Binding bind_blob(const std::string& path, const std::string& backend, const std::vector<std::string>& plugins) {
  EngineOptions options;
  options.backend = backend;
  options.backend_plugins = plugins;
  options.rollback_on_failure = false;  // nothing runs: no snapshot buffer needed
  auto core = EngineCore::open_file(path, options);
  if (!core.is_ok()) {
    Binding unbound;
    unbound.error = core.status().message();
    return unbound;
  }
  return binding_of(*core.value());
}

nlohmann::ordered_json inspect_report(const std::string& path, const BlobContents& blob, const Binding& binding) {
  const ProgramSpec& spec = blob.spec;
  std::vector<int64_t> op_flop(spec.ops.size());
  for (size_t i = 0; i < spec.ops.size(); ++i) op_flop[i] = op_flops(spec, spec.ops[i]);

  Json j;
  j["blob"] = path;
  j["producer"] = blob.metadata.value("producer", "");
  j["metadata_problems"] = blob.metadata_problems;
  j["functions"] = Json::array();
  for (const FunctionSpec& fn : spec.functions) j["functions"].push_back(function_report(blob, fn, op_flop));
  const FunctionSpec* main = blob.main_function();
  j["step_function"] = main ? main->name : "";
  j["flops"] = main ? flops_by_phase(blob, *main, op_flop) : Json::object();
  j["parameters"] = parameters_report(spec);
  j["memory"] = memory_report(blob);
  if (blob.metadata.contains("lora")) j["lora"] = metadata_member(blob, "lora");
  // Not in the blob: the scratch the kernels bound on this machine reserve (staging, im2col).
  if (binding.workspace_bytes >= 0) j["memory"]["workspace_bytes"] = binding.workspace_bytes;
  j["backends"] = backends_report(blob, binding);
  Json ops = Json::array();
  for (size_t i = 0; i < spec.ops.size(); ++i) {
    const OpSpec& op = spec.ops[i];
    Json o;
    o["index"] = i;
    o["function"] = blob.op_function[i] >= 0 ? spec.functions[static_cast<size_t>(blob.op_function[i])].name : "";
    o["op"] = op.op;
    o["name"] = op.name;
    o["phase"] = phase_name(blob.op_phases[i]);
    o["flops"] = op_flop[i];
    o["preferred"] = op.backend;
    o["bound"] = i < binding.op_backends.size() ? Json(binding.op_backends[i]) : Json(nullptr);
    // A convolution's algorithm from compile --profile (docs/pockc.md, "Convolution algorithms").
    const std::string_view algorithm = op.attrs.get_string(kConvAlgorithmAttr, "");
    if (!algorithm.empty()) o["cpu_algorithm"] = std::string(algorithm);
    ops.push_back(std::move(o));
  }
  j["ops"] = std::move(ops);
  return j;
}

}  // namespace pock::tools
