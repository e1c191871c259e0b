#include "tools/quantized_weights_report.hpp"

#include <set>
#include <string>

namespace pock::tools {
namespace {

// The blocks input of a block_quant op, or -1 for any other op.
int weight_input(const std::string& op) {
  if (op == "LinearQ" || op == "LinearQInputGrad") return 1;
  if (op == "GatherQ") return 0;
  return -1;
}

}  // namespace

nlohmann::ordered_json quantized_weights_report(const ProgramSpec& spec) {
  using Json = nlohmann::ordered_json;
  std::set<int32_t> seen;
  uint64_t bytes = 0, f32_bytes = 0;
  Json by_format = Json::object();
  for (const OpSpec& op : spec.ops) {
    const int input = weight_input(op.op);
    if (input < 0 || static_cast<size_t>(input) >= op.inputs.size()) continue;
    const int32_t id = op.inputs[static_cast<size_t>(input)];
    if (id < 0 || static_cast<size_t>(id) >= spec.tensors.size() || !seen.insert(id).second) continue;
    const TensorSpec& t = spec.tensors[static_cast<size_t>(id)];
    const uint64_t rows = t.shape.empty() ? 0 : static_cast<uint64_t>(t.shape[0]);
    const uint64_t as_f32 = rows * static_cast<uint64_t>(op.attrs.get_int("in_features", 0)) * sizeof(float);
    const std::string format(op.attrs.get_string("format", "?"));
    bytes += t.nbytes;
    f32_bytes += as_f32;
    Json& f = by_format[format];
    if (f.is_null()) f = Json{{"tensors", 0}, {"bytes", uint64_t{0}}, {"f32_bytes", uint64_t{0}}};
    f["tensors"] = f["tensors"].get<int64_t>() + 1;
    f["bytes"] = f["bytes"].get<uint64_t>() + t.nbytes;
    f["f32_bytes"] = f["f32_bytes"].get<uint64_t>() + as_f32;
  }
  Json j;
  j["tensors"] = seen.size();
  j["bytes"] = bytes;
  j["f32_bytes"] = f32_bytes;
  j["saved_bytes"] = f32_bytes - bytes;
  j["by_format"] = std::move(by_format);
  return j;
}

}  // namespace pock::tools
