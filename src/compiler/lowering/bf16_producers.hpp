// Recipe precision "bf16", after the shared operand copies (lowering/bf16_operands.hpp): a copy
// whose f32 original has no other reader is written by the original's producer instead. GELU's
// output in a transformer MLP is read only by the down projection's Cast (GeluGrad reads GELU's
// input), so the GELU writes bf16 directly: the f32 [tokens, ffn] tensor, its write and the
// Cast's read of it are gone. The values are those the Cast wrote (the producer rounds its f32
// results to nearest even, as the Cast did), so nothing changes but the traffic.
// Producers: Gelu (attribute output_dtype "bf16", docs/ops.md), whose cpu kernel rounds as the
// cpu Cast does (kernels/cpu/elementwise.cpp). SiLU is not one: the gated MLP's Mul reads it.
#pragma once
#include "compiler/program.hpp"

namespace pock {

// Whether an op may write its output 0 in bf16 (see above).
bool writes_bf16_output(const Node& node);

// Runs after share_bf16_operands, for the same backends (bf16_operands_apply); returns the
// Casts it folded into their producers.
int fold_bf16_casts_into_producers(Graph& g, FunctionDef& fn);

}  // namespace pock
