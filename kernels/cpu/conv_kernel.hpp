// The cpu backend's ways to run a Conv2d. conv.cpp picks one per op at prepare; each is built with
// everything it needs (library operator objects, scratch) so that run() never allocates. Scratch
// is the backend instance's one region (runtime/kernel_scope.hpp), sized to the largest need of
// any op of the engine, not a buffer per op.
//   xnnpack   — frozen (constant) weights: XNNPACK operator created once per engine for each
//               weight, shared by every function's instance of the op, weights repacked into it
//   depthwise — one input channel per group: direct vectorized loops over NCHW, weights read live;
//               on small planes with a trainable weight, channels-last in scratch
//   pointwise — 1x1, stride 1, unpadded, one group: direct register tiles over NCHW, weights
//               packed per run (conv_pointwise.hpp)
//   im2col    — anything else: im2col into scratch + OpenBLAS sgemm, weights read live
// Dense 3x3 stride-1 layers where measured faster go first to Winograd (conv_winograd.hpp), or to
// oneDNN when the environment opts in (conv_dnnl.hpp).
// The last two read the weight tensor on every run, which is what a trainable weight needs: the
// 2022 XNNPACK API packs weights at operator creation and cannot update them without reallocating.
#pragma once
#include <memory>

#include "kernels/cpu/conv_geometry.hpp"
#include "runtime/kernel.hpp"
#include "runtime/kernel_scope.hpp"

namespace pock::cpu {

class ConvKernel {
 public:
  virtual ~ConvKernel() = default;
  virtual Status run(const KernelCall& call) = 0;
};

// Each returns nullptr with an OK status when it cannot run this op (missing library, a shape the
// library rejects), so that the caller can try the next way; an error status is a real failure.
std::unique_ptr<ConvKernel> make_xnnpack_conv(const pock_op_desc& op, const ConvGeometry& g, KernelScope& scope,
                                              Status* status);
std::unique_ptr<ConvKernel> make_depthwise_conv(const pock_op_desc& op, const ConvGeometry& g, KernelScope& scope,
                                                Status* status);
// Depthwise (multiplier 1) onto small planes, channels-last in scratch (conv_depthwise_nhwc.cpp).
std::unique_ptr<ConvKernel> make_channels_last_depthwise_conv(const pock_op_desc& op, const ConvGeometry& g,
                                                              KernelScope& scope, Status* status);
std::unique_ptr<ConvKernel> make_im2col_conv(const pock_op_desc& op, const ConvGeometry& g, KernelScope& scope,
                                             Status* status);

// Whether each way is compiled in and usable (XNNPACK also needs xnn_initialize to succeed).
bool xnnpack_conv_available();
bool im2col_conv_available();

}  // namespace pock::cpu
