// Channels-last 1x1 convolutions over the whole batch at once (conv_pointwise_nhwc.cpp): one sgemm,
// or register tiles for a short reduction. The cpu backend's ways for an NHWC Conv2d of a 1x1
// window, stride 1, unpadded, one group, f32.
#pragma once
#include <memory>

#include "kernels/cpu/conv_kernel.hpp"

namespace pock::cpu {

bool pointwise_nhwc_takes(const ConvGeometry& g);
// Whether one of the two ways is built in for this depth (the tiles need no library).
bool pointwise_nhwc_can_run(const ConvGeometry& g);
// Whether conv2d.cpp tries the sgemm way first: a reduction over 32 or more channels. Shorter ones
// (an expansion from 16 channels) leave sgemm around its multiply-adds, and XNNPACK was as fast
// or faster there (16 -> 96 at 32x32, batch 16, one AVX2 core: 1.39 against 1.66 ms; 24 -> 144:
// 0.72 against 0.72; 40 -> 240: 0.50 against 0.38); the register tiles go first for them.
bool pointwise_nhwc_preferred(const ConvGeometry& g);
// Built with OpenBLAS (the GEMM it runs).
bool pointwise_nhwc_available();

// nullptr with an OK status for a convolution it does not take.
std::unique_ptr<ConvKernel> make_pointwise_nhwc_conv(const pock_op_desc& op, const ConvGeometry& g, KernelScope& scope,
                                                     Status* status);

// Reductions over at most kShortProductMaxDepth channels as short_product.hpp's register tiles
// (conv_pointwise_nhwc.cpp): conv2d.cpp's first way for fewer than 32. Needs no library.
std::unique_ptr<ConvKernel> make_short_nhwc_conv(const pock_op_desc& op, const ConvGeometry& g, KernelScope& scope,
                                                 Status* status);

namespace conv_pointwise_nhwc_testing {
int kernels_made();        // the sgemm way
int short_kernels_made();  // the register tiles
}  // namespace conv_pointwise_nhwc_testing

}  // namespace pock::cpu
