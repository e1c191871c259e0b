#include "compiler/passes/rewrite_util.hpp"

#include <cstring>

#include "ir/activation.hpp"
#include "ir/op_schema.hpp"

namespace pock {

FunctionUses::FunctionUses(const FunctionDef& fn) {
  for (size_t k = 0; k < fn.nodes.size(); ++k) {
    const Node& n = fn.nodes[k];
    for (size_t s = 0; s < n.inputs.size(); ++s) {
      if (n.inputs[s] != kNoTensor) readers_[n.inputs[s]].push_back({k, s});
    }
    for (TensorId out : n.outputs) producer_[out] = static_cast<int>(k);
  }
  signature_.insert(fn.inputs.begin(), fn.inputs.end());
  signature_.insert(fn.outputs.begin(), fn.outputs.end());
  if (fn.loss != kNoTensor) signature_.insert(fn.loss);
}

int FunctionUses::producer(TensorId id) const {
  auto it = producer_.find(id);
  return it == producer_.end() ? -1 : it->second;
}

const std::vector<TensorUse>& FunctionUses::readers(TensorId id) const {
  static const std::vector<TensorUse> kNone;
  auto it = readers_.find(id);
  return it == readers_.end() ? kNone : it->second;
}

std::unordered_set<TensorId> mutated_tensors(const TrainingProgram& program) {
  std::unordered_set<TensorId> out;
  for (const FunctionDef& fn : program.functions) {
    for (const Node& n : fn.nodes) {
      const OpSchema* schema = SchemaRegistry::global().find(n.op);
      if (!schema) continue;
      for (int i : schema->mutated_inputs) {
        if (i < static_cast<int>(n.inputs.size()) && n.inputs[i] != kNoTensor) out.insert(n.inputs[i]);
      }
    }
  }
  return out;
}

bool is_fixed_f32(const Graph& g, const std::unordered_set<TensorId>& mutated, TensorId id) {
  if (id == kNoTensor || mutated.count(id)) return false;
  const TensorDesc& t = g.tensor(id);
  if (t.dtype != DType::kF32 || !t.data || t.data->size() != t.nbytes()) return false;
  switch (t.kind) {
    case TensorKind::kConstant: return true;
    case TensorKind::kParameter: return !t.trainable;
    // Only checkpoints could change it, and a checkpoint is written by this very program, in which
    // nothing mutates it: it always holds the initial value.
    case TensorKind::kState: return true;
    default: return false;
  }
}

std::vector<double> f32_values(const TensorDesc& t) {
  std::vector<float> f(static_cast<size_t>(numel(t.shape)));
  if (!f.empty()) std::memcpy(f.data(), t.data->data(), f.size() * sizeof(float));
  return std::vector<double>(f.begin(), f.end());
}

TensorId add_f32_constant(Graph& g, const std::string& name, const Shape& shape, const std::vector<double>& values) {
  std::vector<uint8_t> bytes(values.size() * sizeof(float));
  for (size_t i = 0; i < values.size(); ++i) {
    const float v = static_cast<float>(values[i]);
    std::memcpy(bytes.data() + i * sizeof(float), &v, sizeof(float));
  }
  return g.add_constant(name, DType::kF32, shape, std::move(bytes));  // add_tensor makes the name unique
}

int remove_nodes(FunctionDef& fn, const std::vector<bool>& removed) {
  std::vector<Node> kept;
  kept.reserve(fn.nodes.size());
  int count = 0;
  for (size_t k = 0; k < fn.nodes.size(); ++k) {
    if (removed[k]) {
      ++count;
    } else {
      kept.push_back(std::move(fn.nodes[k]));
    }
  }
  fn.nodes = std::move(kept);
  return count;
}

bool has_fused_activation(const Node& n) {
  return parse_activation(n.attrs.get_string("activation", "none")) != Activation::kNone;
}

}  // namespace pock
