// Typed parameters of the shape family (Transpose, Concat, Split, Slice, Pad, ...) and of its
// gradients (layer_grad_shape: SliceGrad), parsed once at prepare by one parser every backend
// shares. Lists are kept as given; kernels read them through span_of (runtime/kernel.hpp).
#pragma once
#include <cstdint>
#include <vector>

#include "pock/backend.h"
#include "pock/status.hpp"

namespace pock::params {

// Pad and PadGrad: what fills the border (ONNX's modes; "wrap" is not supported).
enum class PadMode { kConstant, kReflect, kEdge };

struct ShapeParams {
  std::vector<int64_t> perm;                 // Transpose (empty: reverse the dims)
  int64_t axis = 0;                          // Concat, Split (as given: may be negative)
  std::vector<int64_t> starts, axes, steps;  // Slice, SliceGrad
  std::vector<int64_t> pads;                 // Pad: all begins, then all ends
  double value = 0.0;                        // Pad's fill
  bool upper = true;                         // Trilu: which triangle stays
  int64_t k = 0;                             // Trilu: the diagonal it starts from
  PadMode pad_mode = PadMode::kConstant;     // Pad, PadGrad: attribute "mode"
};

// The input index that padded index `i` (already shifted by the begin pad) reads along an axis of
// `n` elements: itself inside; outside, -1 (constant: the fill), the nearest end (edge), or its
// mirror image about the end element (reflect; the schema keeps pads below n).
inline int64_t pad_source(int64_t i, int64_t n, PadMode mode) {
  if (i >= 0 && i < n) return i;
  switch (mode) {
    case PadMode::kEdge: return i < 0 ? 0 : n - 1;
    case PadMode::kReflect: return i < 0 ? -i : 2 * (n - 1) - i;
    case PadMode::kConstant: break;
  }
  return -1;
}

Status parse(const pock_op_desc& op, ShapeParams* out);

}  // namespace pock::params
