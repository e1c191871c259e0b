// 1x1 convolutions on NCHW as direct register tiles (conv_pointwise.cpp): the forward Conv2d with
// its bias and fused activation, and the input gradient (Conv2dGradInput, ConvTranspose2d of a
// 1x1 weight). Each make_ returns nullptr with an OK status for a convolution that is not 1x1,
// stride 1, unpadded and of one group.
#pragma once
#include <memory>

#include "kernels/cpu/conv_dnnl.hpp"
#include "kernels/cpu/conv_kernel.hpp"
#include "kernels/cpu/thread_pool.hpp"

namespace pock::cpu {

bool is_pointwise(const ConvGeometry& g);

// The deepest reduction (input channels forward, output channels for the input gradient) at which
// the built-in rule takes the direct tiles over sgemm; `pockc tune` may pick them for any depth.
inline constexpr int64_t kPointwiseMaxDepth = 64;

// Whether the rule (conv2d.cpp, conv_grad.cpp) runs this convolution through the direct tiles:
// a short reduction over planes of at least one tile.
bool pointwise_preferred(const ConvGeometry& g, ConvDirection direction);

// The tiles on any row-major product, for im2col's unfolded columns (conv_im2col.cpp):
// out[r, p] = act(bias[r] + sum over k of A(r, k) in[k, p]) for r < rows, p < plane, with A packed
// by pack_product_rows (A(r, k) = a[r * row_stride + k * depth_stride]) into
// packed_rows_floats(rows, depth) floats. bias may be null.
size_t packed_rows_floats(int64_t rows, int64_t depth);
void pack_product_rows(const float* a, int64_t row_stride, int64_t depth_stride, int64_t rows, int64_t depth,
                       float* packed);
void direct_product(const float* packed, const float* bias, const float* in, float* out, int64_t rows, int64_t depth,
                    int64_t plane, Activation activation, pthreadpool_t pool);

std::unique_ptr<ConvKernel> make_pointwise_conv(const pock_op_desc& op, const ConvGeometry& g, KernelScope& scope,
                                                Status* status);
std::unique_ptr<ConvKernel> make_pointwise_conv_grad_input(const pock_op_desc& op, const ConvGeometry& g,
                                                           KernelScope& scope, Status* status);

namespace conv_pointwise_testing {
int kernels_made();
}  // namespace conv_pointwise_testing

}  // namespace pock::cpu
