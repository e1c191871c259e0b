#include "compiler/lowering/bf16_producers.hpp"

#include <string_view>
#include <variant>

#include "compiler/passes/rewrite_util.hpp"

namespace pock {
namespace {

bool is_cast_to_bf16(const Node& node) {
  if (node.op != "Cast" || node.inputs.size() != 1 || node.outputs.size() != 1) return false;
  const AttrValue* to = node.attrs.find("to");
  const auto* name = to ? std::get_if<std::string>(to) : nullptr;
  return name && *name == "bf16";
}

}  // namespace

bool writes_bf16_output(const Node& node) {
  const std::string_view op = node.op;
  return (op == "Gelu" || op == "Transpose") && node.inputs.size() == 1 && node.outputs.size() == 1;
}

int fold_bf16_casts_into_producers(Graph& g, FunctionDef& fn) {
  const FunctionUses uses(fn);
  std::vector<bool> folded(fn.nodes.size(), false);
  int count = 0;
  for (size_t k = 0; k < fn.nodes.size(); ++k) {
    const Node& cast = fn.nodes[k];
    if (!is_cast_to_bf16(cast)) continue;
    const TensorId x = cast.inputs[0];
    const int p = uses.producer(x);
    if (p < 0 || !writes_bf16_output(fn.nodes[static_cast<size_t>(p)])) continue;
    // The f32 original must have no reader but this Cast, and the caller must not read it.
    if (uses.readers(x).size() != 1 || uses.is_signature(x) || g.tensor(x).kind != TensorKind::kActivation) continue;
    Node& producer = fn.nodes[static_cast<size_t>(p)];
    producer.attrs.set("output_dtype", std::string("bf16"));
    producer.outputs[0] = cast.outputs[0];
    folded[k] = true;
    ++count;
  }
  if (count == 0) return 0;
  std::vector<Node> kept;
  kept.reserve(fn.nodes.size() - static_cast<size_t>(count));
  int32_t removed_before_backward = 0;
  for (size_t k = 0; k < fn.nodes.size(); ++k) {
    if (!folded[k]) {
      kept.push_back(std::move(fn.nodes[k]));
    } else if (fn.backward_begin >= 0 && k < static_cast<size_t>(fn.backward_begin)) {
      ++removed_before_backward;
    }
  }
  fn.nodes = std::move(kept);
  if (fn.backward_begin >= 0) fn.backward_begin -= removed_before_backward;
  return count;
}

}  // namespace pock
