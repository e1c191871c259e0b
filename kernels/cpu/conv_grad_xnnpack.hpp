// Conv2dGradInput with a frozen (constant) weight as an XNNPACK deconvolution: dx is the
// transposed convolution of dy with the same weight, which XNNPACK packs once per engine.
// conv_grad.cpp offers it the ops that the depthwise loops do not take, when the weight is
// constant and xnnpack_conv_grad_input_preferred() says it beats im2col/col2im + sgemm.
#pragma once
#include <cstddef>
#include <memory>

#include "kernels/cpu/conv_grad_geometry.hpp"
#include "kernels/cpu/conv_kernel.hpp"

namespace pock::cpu {

// Returns nullptr with an OK status when it cannot run this op (no XNNPACK, a weight that is not
// constant, a shape XNNPACK rejects), so that the caller tries the next way; an error status is a
// real failure (out of memory). NHWC staging of dy and dx lives in the scope's scratch region.
std::unique_ptr<ConvKernel> make_xnnpack_conv_grad_input(const pock_op_desc& op, const ConvGeometry& g,
                                                         KernelScope& scope, Status* status);

// Whether the deconvolution (with its two staging copies) is expected to beat the gemm way on this
// shape run on `threads` threads; the measurements behind the rule are in conv_grad_xnnpack.cpp.
bool xnnpack_conv_grad_input_preferred(const ConvGeometry& g, size_t threads);

// For tests: force the choice whatever the shape, and count the deconvolution kernels made, so
// that a test knows which way it checked.
namespace conv_grad_xnnpack_testing {
enum class Choice { kByRule, kAlways, kNever };
void set_choice(Choice choice);
Choice choice();
int kernels_made();
}  // namespace conv_grad_xnnpack_testing

}  // namespace pock::cpu
