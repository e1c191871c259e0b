// 1x1 convolutions on NCHW as direct register tiles (conv_pointwise.cpp, short_product.hpp): the forward Conv2d with
// its bias and fused activation, and the input gradient (Conv2dGradInput, ConvTranspose2d of a
// 1x1 weight). Each make_ returns nullptr with an OK status for a convolution that is not 1x1,
// stride 1, unpadded and of one group.
#pragma once
#include <memory>

#include "kernels/cpu/conv_dnnl.hpp"
#include "kernels/cpu/conv_kernel.hpp"

namespace pock::cpu {

bool is_pointwise(const ConvGeometry& g);

// Whether the rule (conv2d.cpp, conv_grad.cpp) runs this convolution through the direct tiles:
// a reduction of at most kShortProductMaxDepth channels over planes of at least one tile.
bool pointwise_preferred(const ConvGeometry& g, ConvDirection direction);

std::unique_ptr<ConvKernel> make_pointwise_conv(const pock_op_desc& op, const ConvGeometry& g, KernelScope& scope,
                                                Status* status);
std::unique_ptr<ConvKernel> make_pointwise_conv_grad_input(const pock_op_desc& op, const ConvGeometry& g,
                                                           KernelScope& scope, Status* status);

namespace conv_pointwise_testing {
int kernels_made();
}  // namespace conv_pointwise_testing

}  // namespace pock::cpu
