// How an operand of a broadcasting binary op lines up with the output, for backends whose loops
// handle only the patterns that dominate real models (the cpu and neon Add/Sub/Mul/Div): the
// same elements, one scalar, a row repeated over the output's leading dims (bias adds,
// per-feature scales), or a channel block — one value per channel applied to a contiguous run
// (an NCHW tensor times a [C, 1, 1] scale: BatchNorm gradients). Others go to another backend.
#pragma once
#include "runtime/kernel.hpp"

namespace pock::cpu {

enum class BroadcastPattern {
  kFull,    // same elements as the output, in the same order
  kScalar,  // one element
  kRow,     // the output's trailing dims, repeated over its leading dims
  kChannel, // a block of the output's dims followed by 1s: each element spans `inner` outputs
  kOther,   // any other broadcast
};

// For kChannel, `*inner` is the number of consecutive outputs one input element applies to.
BroadcastPattern broadcast_pattern(const pock_tensor_desc& in, const pock_tensor_desc& out, int64_t* inner = nullptr);

// One operand covers the output, the other is full, scalar or row: every output is a run of
// one operand against a run, the same run or one value of the other. What the neon loops take,
// and the cpu ones where they write bf16 (the f32 ones take any broadcast).
bool run_patterns(const pock_tensor_desc& a, const pock_tensor_desc& b, const pock_tensor_desc& y);

// Two f32 inputs, one f32 output, in run_patterns.
bool binary_pattern_accepts(const pock_op_desc& op);

}  // namespace pock::cpu
