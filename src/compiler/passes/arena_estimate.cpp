#include "compiler/passes/arena_estimate.hpp"

#include <algorithm>
#include <numeric>
#include <unordered_map>

#include "compiler/memplan/planner.hpp"
#include "ir/op_schema.hpp"

namespace pock {

std::vector<bool> arena_resident(const TrainingProgram& program) {
  const Graph& g = program.graph;
  std::vector<bool> in_arena(g.num_tensors(), false);
  for (size_t id = 0; id < g.num_tensors(); ++id) {
    const TensorKind kind = g.tensors()[id].kind;
    in_arena[id] = kind == TensorKind::kActivation || kind == TensorKind::kOutput;
  }
  for (const FunctionDef& fn : program.functions) {
    for (TensorId id : fn.inputs) in_arena[static_cast<size_t>(id)] = false;
    for (TensorId id : fn.outputs) in_arena[static_cast<size_t>(id)] = false;
    if (fn.loss != kNoTensor) in_arena[static_cast<size_t>(fn.loss)] = false;
  }
  return in_arena;
}

int inplace_candidate(const Node& n) {
  const OpSchema* schema = SchemaRegistry::global().find(n.op);
  if (!schema || schema->inplace_input < 0 || n.outputs.empty()) return -1;
  const size_t ii = static_cast<size_t>(schema->inplace_input);
  if (ii >= n.inputs.size() || n.inputs[ii] == kNoTensor) return -1;
  for (size_t j = 0; j < n.inputs.size(); ++j) {
    if (j != ii && n.inputs[j] == n.inputs[ii]) return -1;  // Mul(x, x) must not overwrite x
  }
  return static_cast<int>(ii);
}

ArenaEstimate estimate_arena(const Graph& g, const std::vector<Node>& nodes, const std::vector<bool>& in_arena) {
  std::unordered_map<TensorId, size_t> request_of;
  std::vector<BufferRequest> requests;
  for (size_t k = 0; k < nodes.size(); ++k) {
    const int32_t at = static_cast<int32_t>(k);
    for (TensorId id : nodes[k].inputs) {
      auto it = id == kNoTensor ? request_of.end() : request_of.find(id);
      if (it != request_of.end()) requests[it->second].last = at;
    }
    for (TensorId id : nodes[k].outputs) {
      if (!in_arena[static_cast<size_t>(id)] || request_of.count(id)) continue;
      request_of[id] = requests.size();
      requests.push_back({g.tensor(id).nbytes(), at, at});
    }
  }
  // In-place groups, as emit.cpp forms them.
  std::vector<size_t> group(requests.size());
  std::iota(group.begin(), group.end(), size_t{0});
  auto root = [&](size_t r) {
    while (group[r] != r) r = group[r] = group[group[r]];
    return r;
  };
  for (size_t k = 0; k < nodes.size(); ++k) {
    const int ii = inplace_candidate(nodes[k]);
    if (ii < 0) continue;
    auto in = request_of.find(nodes[k].inputs[static_cast<size_t>(ii)]);
    auto out = request_of.find(nodes[k].outputs[0]);
    if (in == request_of.end() || out == request_of.end()) continue;
    const BufferRequest& rin = requests[in->second];
    const BufferRequest& rout = requests[out->second];
    const int32_t at = static_cast<int32_t>(k);
    if (rin.last == at && rout.first == at && rin.size == rout.size) group[root(out->second)] = root(in->second);
  }
  std::vector<BufferRequest> merged;
  std::unordered_map<size_t, size_t> index_of_root;
  for (size_t r = 0; r < requests.size(); ++r) {
    auto [it, fresh] = index_of_root.emplace(root(r), merged.size());
    if (fresh) {
      merged.push_back(requests[r]);
      continue;
    }
    BufferRequest& m = merged[it->second];
    m.size = std::max(m.size, requests[r].size);
    m.first = std::min(m.first, requests[r].first);
    m.last = std::max(m.last, requests[r].last);
  }
  const MemoryPlan plan = plan_memory(merged);
  return {plan.peak, plan.lower_bound};
}

}  // namespace pock
