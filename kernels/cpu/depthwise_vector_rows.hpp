// Depthwise 3x3 and 5x5 windows over NCHW planes of rows at least 8 wide, every column in
// 8-float vectors: the columns outside a row enter as zero lanes, a row whose width is not a
// multiple of 8 ends with a vector that overlaps the one before it, stride 2 splits each pair of
// input vectors into even and odd columns by shuffles, and a whole plane is one call with the
// taps in registers. Pads: K / 2 on every side at stride 1; at stride 2 K / 2 on top and left
// (PyTorch's) or one less there and the rest on the bottom and right (TensorFlow's "same" on even
// sizes). This covers MobileNet's and EfficientNet-Lite's depthwise layers at 128 and 224 pixels
// except the 7x7 and 4x4 planes. The general row loops pay a scalar loop for the edge columns
// and per-row set-up, which on rows of 8-32 columns cost as much as the arithmetic. Users: the
// forward (conv_depthwise.cpp) and both gradients (conv_grad_depthwise.cpp). The 5x5 planes live
// in depthwise_vector_rows_5x5.cpp.
#pragma once
#include <cstdint>

#include "kernels/cpu/activation_epilogue.hpp"
#include "kernels/cpu/conv_geometry.hpp"

namespace pock::cpu {

// A 3x3 or 5x5 undilated window of stride 1 or 2 (both ways), an output width of 8 or more (for
// 5x5 at stride 1: 8, or 10 or more and not one past a multiple of 8) and an input width of
// stride x that width; pads as above.
bool depthwise_vector_rows_take(const ConvGeometry& g);

// The input gradient of such a window with one output channel per input channel: at stride 1 the
// same window over dy with the taps turned by 180 degrees; at stride 2 (an input of twice the
// output's rows, or for 3x3 one fewer) each dy row writes two dx rows, their even and odd columns
// apart.
bool depthwise_vector_rows_take_input_gradient(const ConvGeometry& g);
// sums[ky * K + kx] += the tap's weight gradient from one image: x the input plane, dy the output
// channel's plane (any depth multiplier).
void depthwise_vector_weight_gradient_plane(const ConvGeometry& g, const float* x, const float* dy, double* sums);
// One dx plane from its dy plane and the channel's nine taps w (not turned); overwrites dx.
void depthwise_vector_input_gradient_plane(const ConvGeometry& g, const float* dy, const float* w, float* dx);

// One output plane: y = clamp(bias + window(x, taps)), taps[ky * K + kx] weighting input pixel
// (oy * stride - pad + ky, ox * stride - pad + kx); pixels outside the input read as zero.
void depthwise_vector_plane(const ConvGeometry& g, const float* x, const float* taps, float bias, Clamp c, float* y);

}  // namespace pock::cpu
