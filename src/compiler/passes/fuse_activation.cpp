// Activation fusion: Conv2d / Linear / BatchNorm / BatchNormTrain followed by Relu / Relu6
// becomes one op carrying the attribute activation="relu" | "relu6" (its kernels apply it to the
// output as it is written; BatchNormTrain to y, its first output). The pre-activation tensor then
// never exists: one op, one pass over memory and one buffer fewer. MobileNet-style blocks
// (convolution, BatchNorm, ReLU6) trained with batch statistics fuse at the BatchNorm.
//
// In a training function the backward usually reads the pre-activation too: ReluGrad(dy, x) and
// Relu6Grad(dy, x) compute dy * f'(x). They may read the activation's output instead, exactly:
//   relu:  x > 0      <=> relu(x) > 0
//   relu6: 0 < x < 6  <=> 0 < relu6(x) < 6
// (also for NaN, which fails both sides). Those readers are rewritten to the output; any other
// reader of the pre-activation keeps the ops apart. Autodiff has run before this pass, so no
// gradient rule ever sees a fused node (the rules refuse one). BatchNormTrainGrad reads the
// BatchNorm's input, not its output, so the training form fuses as readily as the others.
#include "compiler/passes/passes.hpp"
#include "compiler/passes/rewrite_util.hpp"

namespace pock {
namespace {

struct ActivationOp {
  const char* op;
  const char* grad;       // its gradient op, reading (dy, x)
  const char* attribute;  // the value of Conv2d / Linear "activation"
};
constexpr ActivationOp kActivations[] = {{"Relu", "ReluGrad", "relu"}, {"Relu6", "Relu6Grad", "relu6"}};

const ActivationOp* activation_of(const Node& n) {
  for (const ActivationOp& a : kActivations) {
    if (n.op == a.op) return &a;
  }
  return nullptr;
}

// The ops with an "activation" attribute, with the outputs they have (the activation applies to
// the first).
bool takes_activation(const Node& n) {
  if (n.op == "Conv2d" || n.op == "Linear" || n.op == "BatchNorm") return n.outputs.size() == 1;
  return n.op == "BatchNormTrain" && n.outputs.size() == 3;
}

// Every reader of x other than the activation itself is its gradient reading x as the input
// (slot 1) and not as dy.
bool other_readers_are_grads(const FunctionDef& fn, const FunctionUses& uses, TensorId x, size_t activation_node,
                             const ActivationOp& a) {
  for (const TensorUse& u : uses.readers(x)) {
    if (u.node == activation_node) continue;
    const Node& reader = fn.nodes[u.node];
    if (reader.op != a.grad || u.slot != 1 || reader.inputs[0] == x) return false;
  }
  return true;
}

}  // namespace

int fuse_activations(TrainingProgram& program) {
  const Graph& g = program.graph;
  int fused = 0;
  for (FunctionDef& fn : program.functions) {
    const FunctionUses uses(fn);
    std::vector<bool> removed(fn.nodes.size(), false);
    for (size_t k = 0; k < fn.nodes.size(); ++k) {
      const Node& act = fn.nodes[k];
      const ActivationOp* a = activation_of(act);
      if (!a || act.inputs.size() != 1 || act.outputs.size() != 1) continue;
      const TensorId x = act.inputs[0], y = act.outputs[0];
      const int p = uses.producer(x);
      if (p < 0 || removed[static_cast<size_t>(p)]) continue;
      Node& op = fn.nodes[static_cast<size_t>(p)];
      if (!takes_activation(op) || has_fused_activation(op) || op.outputs[0] != x) continue;
      if (uses.is_signature(x) || g.tensor(x).dtype != DType::kF32) continue;
      if (!other_readers_are_grads(fn, uses, x, k, *a)) continue;
      for (const TensorUse& u : uses.readers(x)) {
        if (u.node != k) fn.nodes[u.node].inputs[u.slot] = y;
      }
      op.attrs.set("activation", std::string(a->attribute));
      op.outputs[0] = y;
      removed[k] = true;
      ++fused;
    }
    remove_nodes(fn, removed);
  }
  return fused;
}

}  // namespace pock
