// Typed parameters of the linalg family's GEMMs (MatMul, Linear, and Linear's gradients
// LinearInputGrad / LinearWeightGrad), parsed once at prepare by one parser that every backend
// shares.
#pragma once
#include "ir/activation.hpp"
#include "pock/backend.h"
#include "pock/status.hpp"

namespace pock::params {

// Attribute bf16_weight of a bf16 Linear / LinearInputGrad over a trainable weight (set by the
// compiler on a forward Linear and the LinearInputGrad of the same weight in one function): the
// forward's bf16 copy of the weight is kept for the input gradient, which then converts nothing.
// A hint: a backend that ignores it computes the same values.
enum class Bf16Weight { kOwn, kKeep, kKept };

struct MatMulParams {
  bool transpose_a = false, transpose_b = false;  // MatMul
  Activation activation = Activation::kNone;      // Linear's fused epilogue
  // compute "bf16": both operands rounded to bf16 (kernels/bf16_round.h), f32 products and sums.
  bool bf16 = false;
  Bf16Weight bf16_weight = Bf16Weight::kOwn;  // "keep" on the forward Linear, "kept" on LinearInputGrad
};

Status parse(const pock_op_desc& op, MatMulParams* out);

// True when the GEMM's attributes parse and it computes in plain f32 (not compute "bf16"): what a
// backend without bf16 GEMMs checks in `accepts`, so that such an op goes to one that rounds.
bool is_f32_gemm(const pock_op_desc& op);

}  // namespace pock::params
