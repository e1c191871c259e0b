// Recipe precision "bf16": every GEMM of Linear and MatMul, forward and backward, computes with
// bf16 operands and f32 sums (attribute compute "bf16", docs/ops.md). Only the GEMMs change:
// weights, gradients and optimizer state stay f32, so the updates are those of f32 training.
#pragma once
#include <vector>

#include "pock/compiler/ir.hpp"

namespace pock {

// Marks the nodes; returns how many it marked.
int mark_bf16_gemms(std::vector<Node>& nodes);

}  // namespace pock
