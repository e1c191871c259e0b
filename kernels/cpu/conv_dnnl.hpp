// Dense convolutions and their input gradients through oneDNN (x86 builds with POCK_HAVE_DNNL):
// its Winograd F(4x4,3x3) kernels (AVX-512) or its direct JIT kernels. Winograd does 36 multiplies
// per 4x4 output tile and input/output channel pair where a direct 3x3 convolution does 144, so at
// the same arithmetic speed it runs up to 4x the "effective" GFLOP/s that `pockc inspect`'s direct
// FLOP count implies; its transforms cost about one decimal digit against direct summation (the
// tests bound the error against kernels/ref).
//
// Each run reorders x (or dy) from NCHW into oneDNN's blocked layout, the weight from OIHW, and the
// result back to NCHW, all in the engine's shared scratch (runtime/kernel_scope.hpp): nothing is
// kept per op, so a trainable weight is read live and a frozen one costs one weight reorder per run
// (0.01-0.1 ms up to 256 channels, 1.5 ms at 512; measured with the rule below).
#pragma once
#include <memory>

#include "kernels/cpu/conv_kernel.hpp"

namespace pock::cpu {

enum class DnnlConvAlgorithm { kDirect, kWinograd };
enum class ConvDirection { kForward, kInputGrad };  // Conv2d (x, w[, b]) -> y; Conv2dGradInput (dy, w) -> dx

// nullptr with an OK status when the build has no oneDNN or oneDNN has no kernel for this
// convolution with `algorithm` on this CPU (Winograd: 3x3, stride 1, no dilation, one group,
// channels a multiple of 16, AVX-512).
std::unique_ptr<ConvKernel> make_dnnl_conv(const pock_op_desc& op, const ConvGeometry& g, ConvDirection direction,
                                           DnnlConvAlgorithm algorithm, KernelScope& scope, Status* status);

// The way the speed rule (conv_dnnl.cpp) picks for this shape, or nullptr (OK status) where it
// keeps the backend's other ways.
std::unique_ptr<ConvKernel> make_dnnl_conv_by_rule(const pock_op_desc& op, const ConvGeometry& g,
                                                   ConvDirection direction, KernelScope& scope, Status* status);

// Tests force the choice and count what was made. The default is kNever (conv_dnnl.cpp says why).
namespace conv_dnnl_testing {
enum class Choice { kByRule, kDirect, kWinograd, kNever };
void set_choice(Choice choice);
int kernels_made(DnnlConvAlgorithm algorithm);
}  // namespace conv_dnnl_testing

}  // namespace pock::cpu
