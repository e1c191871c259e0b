// load_weights: checkpoint values into a built graph, by PyTorch state_dict name.
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "pock/compiler/models.hpp"

namespace pock::models {
namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool holds_weights(const TensorDesc& t) {
  // A cache (a decode step's KV cache) is no weight: it starts empty.
  return (t.kind == TensorKind::kParameter || (t.kind == TensorKind::kState && !t.cache)) && t.dtype == DType::kF32;
}

}  // namespace

Status load_weights(Graph& graph, const WeightMap& weights, const LoadWeightsOptions& options) {
  // Validate everything first so that a bad map leaves the graph untouched.
  std::vector<std::pair<TensorId, const std::vector<float>*>> updates;
  for (const auto& [name, values] : weights) {
    // BatchNorm's batch counter only matters to PyTorch's momentum=None mode, which PockEngine does not use.
    if (ends_with(name, ".num_batches_tracked")) continue;
    const TensorId id = graph.find(name);
    if (id == kNoTensor || !holds_weights(graph.tensor(id))) {
      return Status(Code::kNotFound, "load_weights: the model has no f32 parameter or state named '" + name + "'");
    }
    const TensorDesc& t = graph.tensor(id);
    if (static_cast<int64_t>(values.size()) != numel(t.shape)) {
      return Status(Code::kShapeMismatch, "load_weights: '" + name + "' has shape " + shape_str(t.shape) + " (" +
                                              std::to_string(numel(t.shape)) + " values) but the map holds " +
                                              std::to_string(values.size()));
    }
    updates.emplace_back(id, &values);
  }
  if (options.require_all) {
    for (const TensorDesc& t : graph.tensors()) {
      if (holds_weights(t) && !weights.count(t.name)) {
        return Status(Code::kNotFound, "load_weights: no value for '" + t.name + "'");
      }
    }
  }
  for (const auto& [id, values] : updates) {
    std::vector<uint8_t> bytes(values->size() * sizeof(float));
    if (!bytes.empty()) std::memcpy(bytes.data(), values->data(), bytes.size());
    graph.mutable_tensor(id).data = std::make_shared<const std::vector<uint8_t>>(std::move(bytes));
  }
  return Status::ok();
}

}  // namespace pock::models
