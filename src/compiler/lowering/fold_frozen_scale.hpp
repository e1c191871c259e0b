// Frozen-scale folding, before autodiff: the paper's sparse CNN schemes train every BatchNorm shift
// (beta) while the convolution weights, BatchNorm scales and running statistics stay frozen. Such
// a block, Conv2d -> BatchNorm (inference form), is rewritten as
//   Conv2d(x, w * s, bias = Add(beta, (b - mean) * s)),   s = gamma / sqrt(var + eps)
// writing the BatchNorm's output, with w * s and (b - mean) * s new compile-time constants. The
// gradient of beta then comes from the conv-bias gradient through the Add, and dx from
// Conv2dGradInput with w * s: no BatchNorm in the forward, no scaling Mul in the backward, and the
// activation after the block can fuse into the convolution. (fold_batchnorm.cpp, after autodiff,
// folds the blocks whose shift is fixed too.)
#pragma once
#include <unordered_set>
#include <vector>

#include "compiler/passes/conv_batchnorm_fold.hpp"
#include "compiler/program.hpp"

namespace pock {

// Tensors that the nodes write in place (schema mutated_inputs): with the trainable flags, what
// the fold must treat as changing before the optimizer's updates exist.
std::unordered_set<TensorId> tensors_mutated_by(const std::vector<Node>& nodes);

// Rewrites every foldable Conv2d -> BatchNorm pair of `fn` whose shift is a trainable parameter;
// returns how many. `mutated`: tensors some function of the program writes (a trainable
// parameter counts as changing whether or not an update exists yet). `folds` shares the new
// constants between the functions that fold the same layer.
Result<int> fold_frozen_scales(Graph& g, FunctionDef& fn, const std::unordered_set<TensorId>& mutated,
                               ConvBatchNormFolds& folds);

}  // namespace pock
