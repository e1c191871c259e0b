// Typed parameters of the linalg family (MatMul, Linear), parsed once at prepare by one parser
// that every backend shares.
#pragma once
#include "ir/activation.hpp"
#include "pock/backend.h"
#include "pock/status.hpp"

namespace pock::params {

struct MatMulParams {
  bool transpose_a = false, transpose_b = false;  // MatMul
  Activation activation = Activation::kNone;      // Linear's fused epilogue
};

Status parse(const pock_op_desc& op, MatMulParams* out);

}  // namespace pock::params
