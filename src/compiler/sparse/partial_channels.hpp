// Partial-channel updates: a trainable parameter with TensorDesc::channels = k > 0 trains only its
// leading k rows (dim 0: the output channels of a Conv2d [O, C, kh, kw] or Linear [N, K] weight).
// Rows are contiguous in that layout, so its gradient, optimizer state and update cover exactly
// the first numel(gradient) elements of the parameter; the other rows stay frozen.
#pragma once
#include <cstdint>
#include <vector>

#include "pock/compiler/ir.hpp"

namespace pock {

// The leading rows of `param` that train, or -1 when all do (or it does not train).
inline int64_t trained_rows(const TensorDesc& param) {
  return param.trainable && param.channels > 0 && !param.shape.empty() && param.channels < param.shape[0]
             ? param.channels
             : -1;
}

// The shape of the gradient and optimizer state of `param`: [k, rest...] under a partial-channel
// update, else its own shape.
inline Shape trained_shape(const TensorDesc& param) {
  Shape s = param.shape;
  if (trained_rows(param) > 0) s[0] = param.channels;
  return s;
}

// Attributes of a Slice that keeps the leading `rows` entries along `axis` (negative: from the end).
inline Attrs leading_slice_attrs(int64_t rows, int64_t axis) {
  return Attrs{{"starts", std::vector<int64_t>{0}}, {"ends", std::vector<int64_t>{rows}},
               {"axes", std::vector<int64_t>{axis}}};
}

}  // namespace pock
