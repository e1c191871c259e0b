#include "compiler/passes/arena_estimate.hpp"

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

ArenaEstimate estimate_arena(const Graph& g, const std::vector<Node>& nodes, const std::vector<bool>& in_arena) {
  auto plan = plan_function_arena(g, nodes, in_arena);
  if (!plan.is_ok()) return {UINT64_MAX, UINT64_MAX};
  return {plan->plan.peak, plan->plan.lower_bound};
}

}  // namespace pock
