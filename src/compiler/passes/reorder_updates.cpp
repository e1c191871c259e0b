// Operator reordering with in-place update (PockEngine §3): an optimizer update runs as soon as
// everything it depends on is done — its gradient (and any state it reads) has been produced and
// every other reader of the parameter has run. The gradient buffer then dies right away instead
// of staying alive until the end of the step.
#include <algorithm>
#include <unordered_map>

#include "compiler/passes/passes.hpp"
#include "ir/op_schema.hpp"

namespace pock {
namespace {

bool is_update(const Graph& g, const Node& n) {
  const OpSchema* schema = SchemaRegistry::global().find(n.op);
  if (!schema) return false;
  for (int i : schema->mutated_inputs) {
    if (i < static_cast<int>(n.inputs.size()) && n.inputs[i] != kNoTensor) {
      const TensorDesc& t = g.tensor(n.inputs[i]);
      if (t.kind == TensorKind::kParameter && t.trainable) return true;
    }
  }
  return false;
}

// The tensors a node writes: its outputs and the inputs its schema mutates in place.
std::vector<TensorId> written_by(const Node& n) {
  std::vector<TensorId> out = n.outputs;
  const OpSchema* schema = SchemaRegistry::global().find(n.op);
  if (!schema) return out;
  for (int i : schema->mutated_inputs) {
    if (i < static_cast<int>(n.inputs.size()) && n.inputs[i] != kNoTensor) out.push_back(n.inputs[i]);
  }
  return out;
}

}  // namespace

int reorder_updates(const TrainingProgram& program, FunctionDef& fn) {
  const Graph& g = program.graph;
  std::vector<Node> rest, updates;
  for (Node& n : fn.nodes) (is_update(g, n) ? updates : rest).push_back(std::move(n));
  if (updates.empty()) {
    fn.nodes = std::move(rest);
    return 0;
  }
  // Position (in `rest`) of each tensor's producer and of each tensor's last reader.
  std::unordered_map<TensorId, int> producer, last_reader;
  for (int k = 0; k < static_cast<int>(rest.size()); ++k) {
    for (TensorId in : rest[k].inputs) if (in != kNoTensor) last_reader[in] = k;
    for (TensorId out : rest[k].outputs) producer[out] = k;
  }
  // Updates are placed independently, each after its own dependencies; an update only waits for
  // an earlier update when the two touch a common tensor (e.g. a shared clipping scale).
  std::vector<std::vector<Node>> after(rest.size() + 1);
  std::vector<int> slot(updates.size(), -1);
  int moved = 0;
  const int original_tail = static_cast<int>(rest.size()) - 1;
  // Two updates keep their order only when one writes (in place, or as an output) a tensor that
  // the other reads or writes. Reading a common tensor is no conflict: every update reads the step
  // counter, and treating that as one chained all of them behind the update placed last.
  auto conflicts = [](const Node& a, const Node& b) {
    const std::vector<TensorId> wa = written_by(a), wb = written_by(b);
    for (TensorId x : wa) {
      if (std::find(b.inputs.begin(), b.inputs.end(), x) != b.inputs.end()) return true;
    }
    for (TensorId x : wb) {
      if (std::find(a.inputs.begin(), a.inputs.end(), x) != a.inputs.end()) return true;
    }
    return false;
  };
  for (size_t i = 0; i < updates.size(); ++i) {
    const Node& u = updates[i];
    int earliest = -1;
    for (TensorId in : u.inputs) {
      if (in == kNoTensor) continue;
      auto p = producer.find(in);
      if (p != producer.end()) earliest = std::max(earliest, p->second);
      auto r = last_reader.find(in);  // every other reader of a mutated tensor must run first
      if (r != last_reader.end()) earliest = std::max(earliest, r->second);
    }
    for (size_t j = 0; j < i; ++j) {
      if (conflicts(u, updates[j])) earliest = std::max(earliest, slot[j]);
    }
    slot[i] = earliest;
    if (earliest < original_tail) ++moved;
  }
  for (size_t i = 0; i < updates.size(); ++i) after[slot[i] + 1].push_back(std::move(updates[i]));
  std::vector<Node> out;
  out.reserve(rest.size() + updates.size());
  for (Node& u : after[0]) out.push_back(std::move(u));
  for (size_t k = 0; k < rest.size(); ++k) {
    out.push_back(std::move(rest[k]));
    for (Node& u : after[k + 1]) out.push_back(std::move(u));
  }
  fn.nodes = std::move(out);
  return moved;
}

}  // namespace pock
