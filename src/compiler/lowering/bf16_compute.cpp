#include "compiler/lowering/bf16_compute.hpp"

#include <string_view>
#include <unordered_set>

namespace pock {
namespace {

// A forward Linear and a later LinearInputGrad of one function over the same weight: the forward
// keeps its bf16 copy of the weight for the input gradient (attribute bf16_weight, docs/ops.md).
// The weight cannot change between them: its update follows every read of it.
void pair_weight_copies(std::vector<Node>& nodes) {
  std::unordered_set<TensorId> forward_weights, read_by_input_grad;
  for (const Node& node : nodes) {
    if (node.op == "Linear" && node.inputs.size() > 1) forward_weights.insert(node.inputs[1]);
    if (node.op == "LinearInputGrad" && node.inputs.size() > 1 && forward_weights.count(node.inputs[1])) {
      read_by_input_grad.insert(node.inputs[1]);
    }
  }
  forward_weights.clear();
  for (Node& node : nodes) {
    if (node.inputs.size() < 2 || !read_by_input_grad.count(node.inputs[1])) continue;
    if (node.op == "Linear") {
      node.attrs.set("bf16_weight", std::string("keep"));
      forward_weights.insert(node.inputs[1]);
    } else if (node.op == "LinearInputGrad" && forward_weights.count(node.inputs[1])) {
      node.attrs.set("bf16_weight", std::string("kept"));
    }
  }
}

}  // namespace

int mark_bf16_gemms(std::vector<Node>& nodes) {
  int marked = 0;
  for (Node& node : nodes) {
    const std::string_view op = node.op;
    if (op == "Linear" || op == "MatMul" || op == "LinearInputGrad" || op == "LinearWeightGrad") {
      node.attrs.set("compute", std::string("bf16"));
      ++marked;
    }
  }
  pair_weight_copies(nodes);
  return marked;
}

}  // namespace pock
