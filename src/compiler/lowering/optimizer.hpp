// The optimizer compiled into the train function: update ops that mutate each parameter and its
// state in place, gradient accumulation over micro-batches and global-norm clipping.
#pragma once
#include <vector>

#include "pock/compiler/compiler.hpp"

namespace pock {

struct ParamGrad {
  TensorId param = kNoTensor;
  TensorId grad = kNoTensor;
};

// Appends to `nodes`: AccumulateGrad per parameter (grad_accumulation > 1), GlobalNormClipScale
// (clip_grad_norm > 0), then one SgdUpdate / AdamUpdate per parameter. Optimizer state tensors
// are zero-initialized kState named "<param>.<slot>" (momentum_buffer, exp_avg, exp_avg_sq,
// grad_accum), shaped like the gradient (a partial-channel update: its trained leading rows).
// `step` is the program's i64 step counter.
Status append_optimizer(Graph& graph, std::vector<Node>& nodes, const Recipe& recipe, TensorId step,
                        const std::vector<ParamGrad>& params);

// The attributes every update op shares (learning rate, schedule, accumulation).
Attrs update_attrs(const Recipe& recipe);

}  // namespace pock
