// Depthwise 3x3 windows over NCHW planes whose rows are padded by one and whose output width is a
// multiple of 8 (MobileNet's 64, 32, 16 and 8 columns), every column in 8-float vectors: the
// columns outside a row enter as zero lanes, stride 2 splits each pair of input vectors into even
// and odd columns by shuffles, and a whole plane is one call with the nine taps in registers.
// The general row loops pay a scalar loop for the edge columns and per-row set-up, which on rows
// of 8-32 columns cost as much as the arithmetic. Users: the forward (conv_depthwise.cpp) and
// the stride-1 input gradient, which is the same window with the taps turned by 180 degrees
// (conv_grad_depthwise.cpp).
#pragma once
#include <cstdint>

#include "kernels/cpu/activation_epilogue.hpp"
#include "kernels/cpu/conv_geometry.hpp"

namespace pock::cpu {

// A 3x3 undilated window of stride 1 or 2 (both ways), one pad row on top and one pad column on the
// left, an output width that is a multiple of 8 and an input width of stride x that width.
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
// (oy * stride - 1 + ky, ox * stride - 1 + kx); pixels outside the input read as zero.
void depthwise_vector_plane(const ConvGeometry& g, const float* x, const float* taps, float bias, Clamp c, float* y);

}  // namespace pock::cpu
