#include "compiler/lowering/fuse_head_loss.hpp"

#include <algorithm>

namespace pock {
namespace {

// Index of the node whose first output is `id`, or -1.
int producer(const std::vector<Node>& nodes, TensorId id) {
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (!nodes[i].outputs.empty() && nodes[i].outputs[0] == id) return static_cast<int>(i);
  }
  return -1;
}

int readers(const std::vector<Node>& nodes, TensorId id) {
  int n = 0;
  for (const Node& node : nodes) n += static_cast<int>(std::count(node.inputs.begin(), node.inputs.end(), id));
  return n;
}

}  // namespace

Result<bool> fuse_head_loss(Graph& g, std::vector<Node>& nodes, TensorId loss, bool with_gradient) {
  const int si = producer(nodes, loss);
  if (si < 0 || nodes[static_cast<size_t>(si)].op != "SoftmaxCrossEntropy") return false;
  const TensorId logits = nodes[static_cast<size_t>(si)].inputs[0];
  const int li = producer(nodes, logits);
  if (li < 0) return false;
  const Node& head = nodes[static_cast<size_t>(li)];
  const bool bias = head.inputs.size() > 2 && head.inputs[2] != kNoTensor;
  if (head.op != "LinearQ" || bias || head.attrs.get_string("compute", "f32") != "int8") return false;
  if (g.tensor(head.inputs[1]).shape[0] % 32 != 0) return false;
  if (readers(nodes, logits) != 1 || std::count(g.outputs().begin(), g.outputs().end(), logits) > 0) return false;

  const Node& ce = nodes[static_cast<size_t>(si)];
  Node fused;
  fused.op = "LinearQCrossEntropy";
  fused.name = ce.name;
  fused.inputs = {head.inputs[0], head.inputs[1], ce.inputs[1]};
  fused.outputs = {loss};
  fused.attrs = head.attrs;
  fused.attrs.set("ignore_index", ce.attrs.get_int("ignore_index", -100));
  fused.attrs.set("label_smoothing", ce.attrs.get_float("label_smoothing", 0.0));
  fused.attrs.set("with_gradient", int64_t{with_gradient ? 1 : 0});
  fused.phase = Phase::kLoss;
  if (with_gradient) {
    TensorDesc dx;
    dx.name = g.unique_name(head.name + "/loss_grad");
    dx.shape = g.tensor(head.inputs[0]).shape;
    fused.outputs.push_back(g.add_tensor(std::move(dx)));
  }
  nodes[static_cast<size_t>(si)] = std::move(fused);
  nodes.erase(nodes.begin() + li);
  return true;
}

}  // namespace pock
