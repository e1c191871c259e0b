// The LM head and its cross-entropy as one op, LinearQCrossEntropy (ir/ops/block_quant.cpp), where
// the head is a LinearQ with compute "int8" and no bias whose logits nothing but the loss reads:
// the op works through the rows a chunk at a time, so the [rows, vocabulary] logits (100 MB for
// SmolLM2 at 4 x 128) and their gradient never exist whole. With `with_gradient` (train) the op
// also writes the loss's gradient with respect to the head's input (for dloss = 1), which the
// gradient rule scales by dloss; eval keeps only the loss. Runs before autodiff.
#pragma once
#include <vector>

#include "compiler/program.hpp"

namespace pock {

// True when it fused (`loss` is then the fused node's first output).
Result<bool> fuse_head_loss(Graph& g, std::vector<Node>& nodes, TensorId loss, bool with_gradient);

}  // namespace pock
