// Dense 3x3 stride-1 convolutions and their input gradients by Winograd F(4x4,3x3), the cpu
// backend's own (conv_winograd_transforms.hpp for the arithmetic): 36 multiplies per 4x4 output
// tile and channel pair where the direct convolution does 144, at the price of about one decimal
// digit of precision (the output transform's entries reach 8; the tests bound the error against
// kernels/ref). Unlike oneDNN's Winograd (conv_dnnl.hpp) it allocates nothing while it runs:
// every buffer lies in the engine's shared scratch, sized at prepare, and a frozen weight's
// transform is made once at prepare (where it is small, conv_winograd.cpp) and shared by every
// instance of the op.
//
// The input gradient of a stride-1 convolution is the same convolution over dy with the weight
// rotated by 180 degrees, its channel axes swapped, and padding 2 - pad: the same kernel computes
// it from a differently transformed weight.
#pragma once
#include <memory>

#include "kernels/cpu/conv_dnnl.hpp"
#include "kernels/cpu/conv_kernel.hpp"

namespace pock::cpu {

// Whether this kernel can run the convolution at all: one group, 3x3, stride 1, no dilation,
// padding at most 2 on every side (the input gradient then pads 2 - pad >= 0).
bool winograd_conv_takes(const ConvGeometry& g);

// The kernel where the speed rule (conv_winograd.cpp) picks it for this shape, else nullptr with
// an OK status so that the caller tries its other ways.
std::unique_ptr<ConvKernel> make_winograd_conv_by_rule(const pock_op_desc& op, const ConvGeometry& g,
                                                       ConvDirection direction, KernelScope& scope, Status* status);

// The kernel whatever the rule says (a per-layer choice, kernels/cpu/conv_algorithm_choice.hpp),
// else nullptr with an OK status where winograd_conv_takes() is false or the build has no OpenBLAS.
std::unique_ptr<ConvKernel> make_winograd_conv(const pock_op_desc& op, const ConvGeometry& g, ConvDirection direction,
                                               KernelScope& scope, Status* status);

// Tests force the choice and count what was made. The default is the rule, unless the environment
// says POCK_CPU_CONV=direct (never Winograd: for measuring the other ways side by side) or
// POCK_CPU_CONV=winograd (every convolution it takes), read once at load.
namespace conv_winograd_testing {
enum class Choice { kByRule, kAlways, kNever };
void set_choice(Choice choice);
Choice choice();
int kernels_made();
}  // namespace conv_winograd_testing

}  // namespace pock::cpu
