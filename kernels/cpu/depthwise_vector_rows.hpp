// Depthwise 3x3 windows over NCHW planes of rows at least 8 wide, every column in 8-float
// vectors: the columns outside a row enter as zero lanes, a row whose width is not a multiple of 8
// ends with a vector that overlaps the one before it, stride 2 splits each pair of input vectors
// into even and odd columns by shuffles, and a whole plane is one call with the nine taps in
// registers. Pads: one on every side at stride 1; at stride 2 one on top and left (PyTorch's) or
// none there and one on the bottom and right (TensorFlow's "same" on even sizes). This covers
// MobileNet's 3x3 layers at 128 and at 224 pixels except the 7x7 and 4x4 planes. The general row
// loops pay a scalar loop for the edge columns and per-row set-up, which on rows of 8-32 columns
// cost as much as the arithmetic. Users: the forward (conv_depthwise.cpp) and both gradients
// (conv_grad_depthwise.cpp).
#pragma once
#include <cstdint>

#include "kernels/cpu/activation_epilogue.hpp"
#include "kernels/cpu/conv_geometry.hpp"

namespace pock::cpu {

// A 3x3 undilated window of stride 1 or 2 (both ways), an output width of 8 or more and an input
// width of stride x that width; pad 1 on top and left, or at stride 2 also pad 0 there.
bool depthwise_vector_rows_take(const ConvGeometry& g);

// The input gradient of such a window with one output channel per input channel: at stride 1 the
// same window over dy with the taps turned by 180 degrees; at stride 2 (an input of twice the
// output's rows, or one fewer) each dy row writes two dx rows, their even and odd columns apart.
bool depthwise_vector_rows_take_input_gradient(const ConvGeometry& g);
// sums[ky * 3 + kx] += the tap's weight gradient from one image: x the input plane, dy the output
// channel's plane (any depth multiplier).
void depthwise_vector_weight_gradient_plane(const ConvGeometry& g, const float* x, const float* dy, double* sums);
// One dx plane from its dy plane and the channel's nine taps w (not turned); overwrites dx.
void depthwise_vector_input_gradient_plane(const ConvGeometry& g, const float* dy, const float* w, float* dx);

// One output plane: y = clamp(bias + window(x, taps)), taps[ky * 3 + kx] weighting input pixel
// (oy * stride - pad + ky, ox * stride - pad + kx); pixels outside the input read as zero.
void depthwise_vector_plane(const ConvGeometry& g, const float* x, const float* taps, float bias, Clamp c, float* y);

}  // namespace pock::cpu
