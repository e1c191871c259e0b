#include "compiler/lowering/fold_frozen_scale.hpp"

#include "ir/op_schema.hpp"

namespace pock {
namespace {

// The shift trains: a parameter the recipe selected, f32, one value per channel.
// Its optimizer update writes it in place, so `mutated` may well hold it.
bool is_trainable_shift(const Graph& g, const Node& bn) {
  const TensorId beta = bn.inputs[kBnBeta];
  if (beta == kNoTensor) return false;
  const TensorDesc& t = g.tensor(beta);
  const TensorDesc& gamma = g.tensor(bn.inputs[kBnGamma]);
  return t.kind == TensorKind::kParameter && t.trainable && t.dtype == DType::kF32 && t.shape == gamma.shape &&
         t.shape.size() == 1;
}

}  // namespace

std::unordered_set<TensorId> tensors_mutated_by(const std::vector<Node>& nodes) {
  std::unordered_set<TensorId> out;
  for (const Node& n : nodes) {
    const OpSchema* schema = SchemaRegistry::global().find(n.op);
    if (!schema) continue;
    for (int i : schema->mutated_inputs) {
      if (i < static_cast<int>(n.inputs.size()) && n.inputs[i] != kNoTensor) out.insert(n.inputs[i]);
    }
  }
  return out;
}

Result<int> fold_frozen_scales(Graph& g, FunctionDef& fn, const std::unordered_set<TensorId>& mutated,
                               ConvBatchNormFolds& folds) {
  // Runs on forward functions only: a backward built before would still read the BatchNorm.
  if (fn.backward_begin >= 0) {
    return Status(Code::kInternal, "fold_frozen_scales: function '" + fn.name + "' already has a backward pass");
  }
  const FunctionUses uses(fn);
  const std::vector<bool> none_removed(fn.nodes.size(), false);
  // conv_of[k]: the Conv2d that the BatchNorm at k folds into; bias_add[p]: the Add that the
  // rewritten Conv2d at p reads as its bias, to run right before it.
  std::vector<int> conv_of(fn.nodes.size(), -1);
  std::vector<Node> bias_add(fn.nodes.size());
  int folded = 0;
  for (size_t k = 0; k < fn.nodes.size(); ++k) {
    const int p = conv_before_frozen_batchnorm(g, fn, uses, mutated, none_removed, k);
    if (p < 0 || !is_trainable_shift(g, fn.nodes[k])) continue;
    Node& conv = fn.nodes[static_cast<size_t>(p)];
    const Node& bn = fn.nodes[k];
    const FoldedConv f = folds.fold(g, conv, bn, /*with_beta=*/false);
    auto add = g.create_node("Add", {bn.inputs[kBnBeta], f.bias}, {}, g.unique_name(conv.name + "/folded_bias"));
    if (!add.is_ok()) return add.status();
    add->phase = conv.phase;
    // The convolution now writes the BatchNorm's output; its own output tensor is left unused.
    conv.inputs = {conv.inputs[0], f.weight, add->outputs[0]};
    conv.outputs = bn.outputs;
    bias_add[static_cast<size_t>(p)] = std::move(add.value());
    conv_of[k] = p;
    ++folded;
  }
  if (folded == 0) return 0;
  std::vector<Node> nodes;
  nodes.reserve(fn.nodes.size() + static_cast<size_t>(folded));
  for (size_t k = 0; k < fn.nodes.size(); ++k) {
    if (conv_of[k] >= 0) continue;  // the folded BatchNorm
    if (!bias_add[k].op.empty()) nodes.push_back(std::move(bias_add[k]));
    nodes.push_back(std::move(fn.nodes[k]));
  }
  fn.nodes = std::move(nodes);
  return folded;
}

}  // namespace pock
