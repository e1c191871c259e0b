// Depthwise 5x5 windows over whole NCHW planes in vectors (EfficientNet-Lite's and MobileNetV3's
// layers), the 5x5 counterpart of depthwise_vector_rows.cpp, whose public functions call these
// for kernel 5 once depthwise_vector_rows_take has accepted the geometry: stride 1 padded by two
// on every side, or stride 2 padded by two (PyTorch) or by one on top and left (TensorFlow's
// "same" on even sizes), rows of 8 or more output columns: the forward, both input gradients
// (stride 1: the forward with the taps turned) and the weight gradient.
#pragma once
#include <cstdint>

#include "kernels/cpu/activation_epilogue.hpp"
#include "kernels/cpu/conv_geometry.hpp"

namespace pock::cpu {

// One output plane: y = clamp(bias + window(x, taps)), taps[ky * 5 + kx] weighting input pixel
// (oy * stride - pad + ky, ox * stride - pad + kx); pixels outside the input read as zero.
void depthwise_5x5_plane(const ConvGeometry& g, const float* x, const float* taps, float bias, Clamp c, float* y);
// One dx plane of a stride-2 window whose input has twice the output's rows, from its dy plane and
// the channel's 25 taps w; overwrites dx.
void depthwise_5x5_input_gradient_stride2_plane(const ConvGeometry& g, const float* dy, const float* w, float* dx);
// sums[ky * 5 + kx] += the tap's weight gradient from one image (the same window reads).
void depthwise_5x5_weight_gradient_plane(const ConvGeometry& g, const float* x, const float* dy, double* sums);

}  // namespace pock::cpu
