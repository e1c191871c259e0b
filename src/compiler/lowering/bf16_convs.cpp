#include "compiler/lowering/bf16_convs.hpp"

#include <string>
#include <string_view>

namespace pock {
namespace {

bool is_f32(const Graph& g, TensorId id) { return id != kNoTensor && g.tensor(id).dtype == DType::kF32; }

// The weight (or weight gradient) shape [O, C/groups, kh, kw] of a convolution node: one input
// channel per group and more than one group is a depthwise layer.
bool is_depthwise(const Node& node, const Shape& weight) {
  return node.attrs.get_int("groups", 1) > 1 && weight.size() == 4 && weight[1] == 1;
}

// The node's weight-shaped tensor: w for Conv2d and Conv2dGradInput, dw for Conv2dGradWeight;
// kNoTensor for other ops.
TensorId weight_shaped(const Node& node) {
  const std::string_view op = node.op;
  if ((op == "Conv2d" || op == "Conv2dGradInput") && node.inputs.size() >= 2) return node.inputs[1];
  if (op == "Conv2dGradWeight" && node.outputs.size() == 1) return node.outputs[0];
  return kNoTensor;
}

}  // namespace

int mark_bf16_convs(const Graph& g, std::vector<Node>& nodes) {
  int marked = 0;
  for (Node& node : nodes) {
    const TensorId w = weight_shaped(node);
    if (w == kNoTensor || !is_f32(g, w) || !is_f32(g, node.inputs[0])) continue;
    if (node.attrs.get_string("layout", "NCHW") != "NCHW" || is_depthwise(node, g.tensor(w).shape)) continue;
    node.attrs.set("compute", std::string("bf16"));
    ++marked;
  }
  return marked;
}

}  // namespace pock
