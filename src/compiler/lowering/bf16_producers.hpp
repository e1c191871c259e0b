// Recipe precision "bf16", after the shared operand copies (lowering/bf16_operands.hpp): a copy
// whose f32 original has no other reader is written by the original's producer instead, and the
// Cast, the f32 tensor and its write and read are gone:
//   Gelu       a transformer MLP's activation, read only by the down projection (GeluGrad reads
//              the Gelu's input): [tokens, ffn] values;
//   Transpose  attention's head splits of q, k and v, read only by the score and context
//              MatMuls, and in the backward the context gradient's split;
//   Add, Sub, Mul, Div  where one operand has the output's elements and the other too, or is a
//              scalar or a row (what the cpu kernel writes bf16 from): a gated MLP's
//              silu(gate) * up (read only by the down projection) and its gradients, a scaling
//              by a scalar tensor.
// The producers (attribute output_dtype "bf16", docs/ops.md) round their f32 results as the Cast
// did (kernels/cpu: the same conversion; kernels/ref: the same rounding), so nothing changes but
// the traffic.
#pragma once
#include "compiler/program.hpp"

namespace pock {

// Whether an op may write its output 0 in bf16 (see above).
bool writes_bf16_output(const Graph& g, const Node& node);

// Runs after share_bf16_operands, for the same backends (bf16_operands_apply); returns the
// Casts it folded into their producers.
int fold_bf16_casts_into_producers(Graph& g, FunctionDef& fn);

}  // namespace pock
