// Recipe precision "bf16": every GEMM of Linear and MatMul, forward and backward, computes with
// bf16 operands and f32 sums (attribute compute "bf16", docs/ops.md). Only the GEMMs change:
// weights, gradients and optimizer state stay f32, so the updates are those of f32 training.
// A forward Linear and the LinearInputGrad over the same weight are paired (attribute
// bf16_weight "keep" / "kept"): the weight is converted to bf16 once per step, not twice.
#pragma once
#include <vector>

#include "pock/compiler/ir.hpp"

namespace pock {

// Marks the nodes; returns how many it marked.
int mark_bf16_gemms(std::vector<Node>& nodes);

}  // namespace pock
