// Recompute cheap activations in the backward instead of keeping them (the activation-memory
// part of issue 15's LLaMA budget): y = Silu(x) is read by the backward of the Mul it feeds (the
// gated MLP's up-projection gradient), and its input x is kept for SiluGrad anyway. Recomputing
// y from x right before its first backward reader lets y die with the forward: [tokens, 1536]
// floats a block for SmolLM2, 94 MB of a LoRA step's 610 MB arena, for one exp per element.
// Runs after common-subexpression elimination, which would merge the copy back, and after the
// memory schedule, which would move it up to its input.
#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "compiler/passes/passes.hpp"

namespace pock {

int recompute_activations(TrainingProgram& program, FunctionDef& fn) {
  if (fn.backward_begin < 0) return 0;
  Graph& g = program.graph;
  // Phases, not backward_begin: earlier passes may have moved nodes.
  auto in_backward = [](const Node& n) { return n.phase == Phase::kBackward; };
  std::unordered_set<TensorId> read_by_backward;
  for (const Node& n : fn.nodes) {
    if (!in_backward(n)) continue;
    for (TensorId in : n.inputs) read_by_backward.insert(in);
  }
  auto is_signature = [&](TensorId id) { return id == fn.loss || std::count(fn.outputs.begin(), fn.outputs.end(), id) > 0; };
  std::vector<std::pair<size_t, Node>> inserts;  // (before position, node)
  for (const Node& f : fn.nodes) {
    if (f.phase != Phase::kForward || f.op != "Silu" || f.inputs.size() != 1 || f.outputs.size() != 1) continue;
    const TensorId x = f.inputs[0], y = f.outputs[0];
    if (!read_by_backward.count(y) || !read_by_backward.count(x) || is_signature(y)) continue;
    size_t first = fn.nodes.size();
    for (size_t i = 0; i < fn.nodes.size(); ++i) {
      const Node& n = fn.nodes[i];
      if (in_backward(n) && std::count(n.inputs.begin(), n.inputs.end(), y) > 0) {
        first = i;
        break;
      }
    }
    if (first == fn.nodes.size()) continue;
    TensorDesc copy = g.tensor(y);
    copy.name = g.unique_name(copy.name + "/recomputed");
    copy.kind = TensorKind::kActivation;
    copy.data.reset();
    const TensorId y2 = g.add_tensor(std::move(copy));
    for (Node& n : fn.nodes) {
      if (!in_backward(n)) continue;
      std::replace(n.inputs.begin(), n.inputs.end(), y, y2);
    }
    Node r;
    r.op = f.op;
    r.name = f.name + "/recompute";
    r.inputs = {x};
    r.outputs = {y2};
    r.attrs = f.attrs;
    r.phase = Phase::kBackward;
    r.backend = f.backend;
    inserts.emplace_back(first, std::move(r));
  }
  std::sort(inserts.begin(), inserts.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  for (auto& [position, node] : inserts) fn.nodes.insert(fn.nodes.begin() + static_cast<std::ptrdiff_t>(position), std::move(node));
  return static_cast<int>(inserts.size());
}

}  // namespace pock
