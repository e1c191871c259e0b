// Folding an inference-form BatchNorm into the frozen Conv2d before it, the part shared by the two
// rewrites that do it: passes/fold_batchnorm.cpp (everything fixed, after autodiff) and
// lowering/fold_frozen_scale.cpp (only the shift trains, before autodiff). With
//   s = gamma / sqrt(var + eps)
// BatchNorm(Conv2d(x, w, b)) = Conv2d(x, w * s, (b - mean) * s + beta), per output channel.
#pragma once
#include <cstdint>
#include <map>
#include <tuple>
#include <unordered_set>
#include <vector>

#include "compiler/passes/rewrite_util.hpp"

namespace pock {

// BatchNorm inputs: x, gamma (scale), beta (shift), running mean, running var.
constexpr size_t kBnGamma = 1, kBnBeta = 2, kBnMean = 3, kBnVar = 4;

// The Conv2d node that the BatchNorm at `k` may fold into, or -1: `k` is an inference-form
// BatchNorm whose scale and statistics are fixed, its input comes from a Conv2d (not marked in
// `removed`) with a fixed weight and a fixed or absent bias and no fused activation, and nothing
// else reads that input. Whether the shift is fixed is the caller's question.
int conv_before_frozen_batchnorm(const Graph& g, const FunctionDef& fn, const FunctionUses& uses,
                                 const std::unordered_set<TensorId>& mutated, const std::vector<bool>& removed,
                                 size_t k);

// The new compile-time constants of one fold.
struct FoldedConv {
  TensorId weight = kNoTensor;  // w * s
  TensorId bias = kNoTensor;    // (b - mean) * s, plus beta when the fold includes it
};

// Makes the constants of folds, once per layer: the functions of a program (infer, train, eval)
// fold the same layer from the same tensors and then share one set of constants, so the blob
// holds each folded weight once.
class ConvBatchNormFolds {
 public:
  // `with_beta`: add the (fixed) shift into the bias; without it the caller adds beta itself.
  FoldedConv fold(Graph& g, const Node& conv, const Node& bn, bool with_beta);

 private:
  using Key = std::tuple<TensorId, TensorId, TensorId, TensorId, TensorId, TensorId, uint64_t, bool>;
  std::map<Key, FoldedConv> done_;
};

}  // namespace pock
