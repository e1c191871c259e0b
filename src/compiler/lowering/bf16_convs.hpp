// Recipe precision "bf16" for convolutions: Conv2d and its input and weight gradients compute with
// bf16 operands and f32 sums (attribute compute "bf16", docs/ops.md *bf16 compute*), as the
// GEMMs of Linear and MatMul do (lowering/bf16_compute.hpp). Depthwise convolutions stay f32: they
// are memory-bound (one input channel per output channel, a few multiplies per value read), so
// bf16 products would not speed them up, and their kernels are direct f32 loops.
// Only for the cpu backend (lowering/bf16_operands.hpp's bf16_operands_apply): the other
// backends' convolutions do not round, and would hand the op to ref.
#pragma once
#include <vector>

#include "pock/compiler/graph.hpp"

namespace pock {

// Marks the dense (not depthwise) Conv2d, Conv2dGradInput and Conv2dGradWeight nodes of one
// function over NCHW f32 tensors; returns how many it marked.
int mark_bf16_convs(const Graph& g, std::vector<Node>& nodes);

}  // namespace pock
