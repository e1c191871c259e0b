// Typed parameters of the shape family (Transpose, Concat, Split, Slice, Pad, ...) and of its
// gradients (layer_grad_shape: SliceGrad), parsed once at prepare by one parser every backend
// shares. Lists are kept as given; kernels read them through span_of (runtime/kernel.hpp).
#pragma once
#include <cstdint>
#include <vector>

#include "pock/backend.h"
#include "pock/status.hpp"

namespace pock::params {

struct ShapeParams {
  std::vector<int64_t> perm;                 // Transpose (empty: reverse the dims)
  int64_t axis = 0;                          // Concat, Split (as given: may be negative)
  std::vector<int64_t> starts, axes, steps;  // Slice, SliceGrad
  std::vector<int64_t> pads;                 // Pad: all begins, then all ends
  double value = 0.0;                        // Pad's fill
  bool upper = true;                         // Trilu: which triangle stays
  int64_t k = 0;                             // Trilu: the diagonal it starts from
};

Status parse(const pock_op_desc& op, ShapeParams* out);

}  // namespace pock::params
