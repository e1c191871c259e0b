// The geometry of Conv2d's backward ops, read into the forward op's ConvGeometry so that the
// backward kernels (cpu and neon) index exactly as the forward convolution did:
//   Conv2dGradInput  (dy, w) -> dx   x's shape is dx's, y's is dy's
//   Conv2dGradWeight (x, dy) -> dw   dw holds only the first `channels` output channels
#pragma once
#include <cstdint>

#include "kernels/cpu/conv_geometry.hpp"

namespace pock::cpu {

// False when the op is not a well-formed 2-D f32 convolution gradient (the schema checked it;
// this guards the kernels against what they do not expect, e.g. a dy of the wrong extent).
bool conv_grad_input_geometry(const pock_op_desc& op, ConvGeometry* g);

// *channels: the leading output channels whose weight gradient is computed (dw's extent 0).
bool conv_grad_weight_geometry(const pock_op_desc& op, ConvGeometry* g, int64_t* channels);

// The output columns [begin, end) whose input column ox * stride + shift lies in [0, in_w) for
// the tap with shift = kx * dilation - pad_left: the part of a row a tap touches with no padding.
struct TapColumns {
  int64_t begin = 0, end = 0, shift = 0;
};
TapColumns tap_columns(const ConvGeometry& g, int64_t kx);

// The input row read by output row oy at tap row ky, or -1 when it lies in the padding.
inline int64_t tap_row(const ConvGeometry& g, int64_t oy, int64_t ky) {
  const int64_t iy = oy * g.stride_h - g.pad_top + ky * g.dilation_h;
  return iy >= 0 && iy < g.in_h ? iy : -1;
}

}  // namespace pock::cpu
