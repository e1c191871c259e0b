#include <unordered_set>

#include "compiler/passes/passes.hpp"
#include "ir/op_schema.hpp"

namespace pock {

bool has_side_effects(const Node& node) {
  const OpSchema* schema = SchemaRegistry::global().find(node.op);
  return schema && !schema->mutated_inputs.empty();
}

int eliminate_dead_code(const TrainingProgram& program, FunctionDef& fn) {
  (void)program;
  std::unordered_set<TensorId> live(fn.outputs.begin(), fn.outputs.end());
  if (fn.loss != kNoTensor) live.insert(fn.loss);
  std::vector<bool> keep(fn.nodes.size(), false);
  for (size_t k = fn.nodes.size(); k-- > 0;) {
    const Node& n = fn.nodes[k];
    bool needed = has_side_effects(n);
    for (TensorId out : n.outputs) needed = needed || live.count(out);
    if (!needed) continue;
    keep[k] = true;
    for (TensorId in : n.inputs) {
      if (in != kNoTensor) live.insert(in);
    }
  }
  std::vector<Node> kept;
  int removed = 0;
  for (size_t k = 0; k < fn.nodes.size(); ++k) {
    if (keep[k]) {
      kept.push_back(std::move(fn.nodes[k]));
    } else {
      ++removed;
    }
  }
  fn.nodes = std::move(kept);
  return removed;
}

}  // namespace pock
