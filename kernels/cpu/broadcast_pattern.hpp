// How an operand of a broadcasting binary op lines up with the output, for backends whose loops
// handle only the patterns that dominate real models (kernels/neon's Add/Sub/Mul/Div): the
// same elements, one scalar, or a row repeated over the output's leading dims (bias adds,
// per-feature scales). Any other broadcast is left to another backend.
#pragma once
#include "runtime/kernel.hpp"

namespace pock::cpu {

enum class BroadcastPattern {
  kFull,    // same elements as the output, in the same order
  kScalar,  // one element
  kRow,     // the output's trailing dims, repeated over its leading dims
  kOther,   // any other broadcast
};

BroadcastPattern broadcast_pattern(const pock_tensor_desc& in, const pock_tensor_desc& out);

// Two f32 inputs, one f32 output; one input covers the output, the other is full, scalar or row.
bool binary_pattern_accepts(const pock_op_desc& op);

}  // namespace pock::cpu
