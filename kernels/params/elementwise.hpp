// Typed parameters of the activations — forward (elementwise family), their gradients
// (elementwise_grad) and the 1-byte masks that stand in for them (activation_mask) — parsed once
// at prepare by one parser that every backend shares. One struct: each op reads what it has.
#pragma once
#include <limits>

#include "pock/backend.h"
#include "pock/status.hpp"

namespace pock::params {

struct ActivationParams {
  // LeakyRelu(Grad): the slope below 0 (default 0.01). ScaleShift: the scale (default 1). Elu,
  // Celu, ThresholdedRelu (and their Grads): ONNX's alpha (default 1); Selu: ONNX's alpha.
  double alpha = 0.01;
  double beta = 0.0;   // ScaleShift: the shift
  double gamma = 1.0;  // Selu(Grad): the scale (ONNX's default 1.0507...)
  // Clip, ClipGrad, ClipMask: the bounds; an absent one is infinite.
  double lo = -std::numeric_limits<double>::infinity(), hi = std::numeric_limits<double>::infinity();
  bool has_lo = false, has_hi = false;
  bool inclusive = false;  // ClipMask: both bounds pass; otherwise a given bound is strict
  bool tanh_gelu = false;  // Gelu(Grad): approximate = "tanh"; "none" (erf) otherwise
};

Status parse(const pock_op_desc& op, ActivationParams* out);

}  // namespace pock::params
