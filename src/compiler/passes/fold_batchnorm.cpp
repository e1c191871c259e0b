// BatchNorm folding: an inference-form BatchNorm right after a frozen Conv2d is a per-channel
// affine map of the convolution's output, so it can be baked into the convolution's weight and
// bias at compile time (conv_batchnorm_fold.hpp has the arithmetic):
//   s = gamma / sqrt(var + eps),   w'[o] = w[o] * s[o],   b'[o] = (b[o] - mean[o]) * s[o] + beta[o].
// This is what makes the inference function, and the frozen backbone of sparse training, cheaper:
// one op and one activation fewer per conv-BN block. Only values that cannot change while the
// engine runs are folded (is_fixed_f32), and only when the BatchNorm is the convolution's sole
// reader, so the pre-normalization tensor is not needed by anything else (a backward pass, say).
// A BatchNorm whose shift trains was folded before autodiff, if at all
// (lowering/fold_frozen_scale.cpp).
#include "compiler/passes/conv_batchnorm_fold.hpp"
#include "compiler/passes/passes.hpp"
#include "compiler/passes/rewrite_util.hpp"

namespace pock {

int fold_batchnorms(TrainingProgram& program) {
  Graph& g = program.graph;
  const std::unordered_set<TensorId> mutated = mutated_tensors(program);
  ConvBatchNormFolds folds;
  int folded = 0;
  for (FunctionDef& fn : program.functions) {
    const FunctionUses uses(fn);
    std::vector<bool> removed(fn.nodes.size(), false);
    for (size_t k = 0; k < fn.nodes.size(); ++k) {
      const int p = conv_before_frozen_batchnorm(g, fn, uses, mutated, removed, k);
      if (p < 0 || !is_fixed_f32(g, mutated, fn.nodes[k].inputs[kBnBeta])) continue;
      Node& conv = fn.nodes[static_cast<size_t>(p)];
      const FoldedConv f = folds.fold(g, conv, fn.nodes[k], /*with_beta=*/true);
      // The convolution now writes the BatchNorm's output; its own output tensor is left unused.
      conv.inputs = {conv.inputs[0], f.weight, f.bias};
      conv.outputs = fn.nodes[k].outputs;
      removed[k] = true;
      ++folded;
    }
    remove_nodes(fn, removed);
  }
  return folded;
}

}  // namespace pock
