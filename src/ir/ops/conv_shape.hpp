// The output shape of a 2-D convolution, shared by the ops that convolve (Conv2d and the
// quantize_conv family's integer convolutions) so that they agree on every window attribute.
#pragma once
#include "ir/op_schema.hpp"

namespace pock {

// y [N, O, out_h, out_w] of x [N, C, H, W] convolved with w [O, C / groups, kh, kw] under the
// attributes strides, pads (top, left, bottom, right), dilations and groups; an error names the
// attribute or the shape that does not fit.
Result<Shape> conv2d_output_shape(const InferContext& ctx, const Shape& x, const Shape& w);

}  // namespace pock
