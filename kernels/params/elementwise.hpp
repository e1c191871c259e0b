// Typed parameters of the activations — forward (elementwise family), their gradients
// (elementwise_grad) and the 1-byte masks that stand in for them (activation_mask) — parsed once
// at prepare by one parser that every backend shares. One struct: each op reads what it has.
#pragma once
#include <limits>

#include "pock/backend.h"
#include "pock/status.hpp"

namespace pock::params {

struct ActivationParams {
  double alpha = 0.01;  // LeakyRelu(Grad): the slope below 0. ScaleShift: the scale (default 1)
  double beta = 0.0;    // ScaleShift: the shift
  // Clip, ClipGrad, ClipMask: the bounds; an absent one is infinite.
  double lo = -std::numeric_limits<double>::infinity(), hi = std::numeric_limits<double>::infinity();
  bool has_lo = false, has_hi = false;
  bool inclusive = false;  // ClipMask: both bounds pass; otherwise a given bound is strict
  bool tanh_gelu = false;  // Gelu(Grad): approximate = "tanh"; "none" (erf) otherwise
};

Status parse(const pock_op_desc& op, ActivationParams* out);

}  // namespace pock::params
