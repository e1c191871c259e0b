#include "compiler/lowering/bf16_operands.hpp"

#include <algorithm>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <variant>

namespace pock {
namespace {

bool is_bf16_gemm(const Node& node) {
  const std::string_view op = node.op;
  if (op != "Linear" && op != "MatMul" && op != "LinearInputGrad" && op != "LinearWeightGrad") return false;
  const AttrValue* compute = node.attrs.find("compute");
  const auto* name = compute ? std::get_if<std::string>(compute) : nullptr;
  return name && *name == "bf16";
}

// Values computed or fed during a run; parameters, constants and state are weights, whose bf16
// copies the GEMM kernels keep themselves (once per step, or once for a frozen weight).
bool is_activation(const TensorDesc& t) {
  return t.dtype == DType::kF32 &&
         (t.kind == TensorKind::kActivation || t.kind == TensorKind::kInput || t.kind == TensorKind::kOutput);
}

// The matrix operands a bf16 GEMM reads through a shared copy: both, except a weight paired with
// its forward's copy (attribute bf16_weight) and any bias.
int shared_operand_count(const Node& node) { return node.attrs.find("bf16_weight") ? 1 : 2; }

}  // namespace

bool bf16_operands_apply(const CompileOptions& options) { return options.backend.empty() || options.backend == "cpu"; }

Result<int> share_bf16_operands(Graph& g, FunctionDef& fn) {
  std::unordered_map<TensorId, TensorId> bf16_of;  // f32 activation -> its one bf16 copy
  std::vector<Node> nodes;
  nodes.reserve(fn.nodes.size());
  int inserted = 0, inserted_before_backward = 0;
  for (size_t i = 0; i < fn.nodes.size(); ++i) {
    Node& node = fn.nodes[i];
    if (is_bf16_gemm(node)) {
      const int operands = std::min<int>(shared_operand_count(node), static_cast<int>(node.inputs.size()));
      for (int k = 0; k < operands; ++k) {
        const TensorId x = node.inputs[static_cast<size_t>(k)];
        if (x == kNoTensor || !is_activation(g.tensor(x))) continue;
        auto found = bf16_of.find(x);
        if (found == bf16_of.end()) {
          // Right before its first GEMM reader: the copy lives from there to its last reader.
          const std::string name = g.unique_name(g.tensor(x).name + ".bf16");
          POCK_ASSIGN_OR_RETURN(Node cast, g.create_node("Cast", {x}, Attrs{{"to", std::string("bf16")}}, name, {name}));
          cast.phase = node.phase;
          found = bf16_of.emplace(x, cast.outputs[0]).first;
          nodes.push_back(std::move(cast));
          ++inserted;
          if (fn.backward_begin >= 0 && i < static_cast<size_t>(fn.backward_begin)) ++inserted_before_backward;
        }
        node.inputs[static_cast<size_t>(k)] = found->second;
      }
    }
    nodes.push_back(std::move(node));
  }
  fn.nodes = std::move(nodes);
  if (fn.backward_begin >= 0) fn.backward_begin += inserted_before_backward;
  return inserted;
}

}  // namespace pock
