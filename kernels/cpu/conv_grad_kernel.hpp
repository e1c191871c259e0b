// The cpu backend's ways to run Conv2d's input and weight gradients. conv_grad.cpp picks one per
// op at prepare, like conv.cpp does for the forward op; each is built with its scratch reserved so
// that run() never allocates.
//   depthwise — one input channel per group: direct loops over NCHW, no library
//   gemm      — anything else: im2col / col2im around OpenBLAS sgemm
// Both read w, x and dy on every run: nothing is packed that training could change.
#pragma once
#include <memory>

#include "kernels/cpu/conv_grad_geometry.hpp"
#include "kernels/cpu/conv_kernel.hpp"

namespace pock::cpu {

// The two inner loops of the depthwise gradients, so that a backend with its own vector code
// (kernels/neon) reuses the traversal and supplies only these.
struct DepthwiseGradLoops {
  // y[i * stride] += w * x[i] for i in [0, n)
  void (*scatter_scaled)(float w, const float* x, float* y, int64_t stride, int64_t n);
  // sum of x[i * stride] * y[i] for i in [0, n)
  float (*strided_dot)(const float* x, int64_t stride, const float* y, int64_t n);
};
const DepthwiseGradLoops& cpu_depthwise_grad_loops();

// Each returns nullptr with an OK status when it cannot run this op, so that the caller can try
// the next way; an error status is a real failure (out of memory).
std::unique_ptr<ConvKernel> make_depthwise_conv_grad_input(const pock_op_desc& op, const ConvGeometry& g,
                                                           const DepthwiseGradLoops& loops, Status* status);
std::unique_ptr<ConvKernel> make_depthwise_conv_grad_weight(const pock_op_desc& op, const ConvGeometry& g,
                                                            int64_t channels, const DepthwiseGradLoops& loops,
                                                            Status* status);
// The gemm way's column scratch is the backend instance's shared region (runtime/kernel_scope.hpp).
std::unique_ptr<ConvKernel> make_gemm_conv_grad_input(const pock_op_desc& op, const ConvGeometry& g, KernelScope& scope,
                                                      Status* status);
std::unique_ptr<ConvKernel> make_gemm_conv_grad_weight(const pock_op_desc& op, const ConvGeometry& g, int64_t channels,
                                                       KernelScope& scope, Status* status);

// Whether the gemm way is compiled in (it needs OpenBLAS).
bool gemm_conv_grad_available();

}  // namespace pock::cpu
