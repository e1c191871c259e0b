#include "compiler/lowering/bf16_producers.hpp"

#include <algorithm>
#include <cstddef>
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

// How the cpu kernel that writes a binary op's bf16 output reads an operand (run_patterns in
// kernels/cpu/broadcast_pattern.hpp, the same classification on shapes): as many elements as the
// output, or in runs: one element, or a row (the output's trailing dims, leading 1s aside, not
// ending in a 1, which makes it a channel block there).
enum class OperandRead { kFull, kRun, kOther };

OperandRead operand_read(const Shape& in, const Shape& out) {
  const int64_t n = numel(in);
  if (n == numel(out)) return OperandRead::kFull;
  if (n == 1) return OperandRead::kRun;
  size_t lead = 0;
  while (lead < in.size() && in[lead] == 1) ++lead;
  const size_t rank = in.size() - lead;
  if (in.back() == 1 || rank > out.size()) return OperandRead::kOther;
  const bool row = std::equal(in.begin() + static_cast<std::ptrdiff_t>(lead), in.end(), out.end() - static_cast<std::ptrdiff_t>(rank));
  return row ? OperandRead::kRun : OperandRead::kOther;
}

bool is_binary_arithmetic(std::string_view op) { return op == "Add" || op == "Sub" || op == "Mul" || op == "Div"; }

}  // namespace

bool writes_bf16_output(const Graph& g, const Node& node) {
  const std::string_view op = node.op;
  if (node.outputs.size() != 1) return false;
  if (op == "Gelu" || op == "Transpose") return node.inputs.size() == 1;
  if (!is_binary_arithmetic(op) || node.inputs.size() != 2) return false;
  const Shape& out = g.tensor(node.outputs[0]).shape;
  const OperandRead a = operand_read(g.tensor(node.inputs[0]).shape, out);
  const OperandRead b = operand_read(g.tensor(node.inputs[1]).shape, out);
  return a != OperandRead::kOther && b != OperandRead::kOther && (a == OperandRead::kFull || b == OperandRead::kFull);
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
    if (p < 0 || !writes_bf16_output(g, fn.nodes[static_cast<size_t>(p)])) continue;
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
