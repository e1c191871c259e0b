// Typed parameters of the norm family and its gradients (layer_grad_norm), parsed once at prepare
// by one parser every backend shares, and the one view that every backend takes of a normalized
// tensor: [rows, features] split at the axis, or [outer, extent, inner] around it.
#pragma once
#include <cstdint>

#include "ir/activation.hpp"
#include "pock/backend.h"
#include "pock/status.hpp"

namespace pock::params {

struct RowSplit {
  int64_t rows = 0, features = 0;  // features: the dims from the axis on
};

struct AxisSplit {
  int64_t outer = 1, extent = 1, inner = 1;
};

// LayerNorm, RMSNorm, Softmax, LogSoftmax and their gradients.
struct AxisNormParams {
  int64_t axis = -1;  // normalized against the rank of the op's first input: 0 <= axis < rank
  double eps = 1e-5;  // LayerNorm's default; RMSNorm's is 1e-6
  RowSplit rows(const pock_tensor_desc& x) const;
  AxisSplit around(const pock_tensor_desc& x) const;
  // Whether the axis is contiguous: every dim after it is 1 (a softmax over rows).
  bool axis_is_last(const pock_tensor_desc& x) const { return around(x).inner == 1; }
};

// BatchNorm (inference) and BatchNormTrain: running statistics move by `momentum` (PyTorch);
// `activation` is applied to y as it is written (the fusion pass sets it, as on Conv2d).
struct BatchNormParams {
  double eps = 1e-5, momentum = 0.1;
  Activation activation = Activation::kNone;
};

Status parse(const pock_op_desc& op, AxisNormParams* out);
Status parse(const pock_op_desc& op, BatchNormParams* out);

}  // namespace pock::params
