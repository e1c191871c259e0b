// Conv2d, Conv2dGradInput and Conv2dGradWeight with compute "bf16" (recipe precision "bf16"):
// both operands rounded to bf16, f32 products and sums, f32 outputs (kernels/params/conv.hpp).
// The same im2col / col2im unfolding as the f32 gemm ways (conv_im2col.cpp, conv_grad_gemm.cpp),
// per image and group, with the GEMM's operands converted into the engine's scratch:
//   forward      y[O/g, P]  = w[O/g, K] cols[K, P]           (cols: x unfolded)
//   input grad   dcols[K, P] = wᵀ[K, O/g] dy[O/g, P], then col2im onto dx
//   weight grad  dw[k, K]   += dy[k, P] colsᵀ[P, K] over the images
// K = C/g * kh * kw, P = OH * OW. On Bf16Isa::kAvx512Bf16 the operands are bf16 and oneDNN's
// matmul multiplies them (kernels/cpu/bf16_gemm.hpp); otherwise they are the same values rounded
// in f32 and OpenBLAS's sgemm multiplies them (correct, not faster). The weight is converted on
// every run, so a trainable one is read live. Like the bf16 GEMMs through oneDNN, the oneDNN way
// makes small heap allocations in each primitive execution (docs/ops.md, *bf16 compute*).
#pragma once
#include <memory>

#include "kernels/cpu/conv_kernel.hpp"

namespace pock::cpu {

// Whether this way takes the op's geometry (it needs OpenBLAS; an empty batch or plane goes to ref).
bool bf16_conv_accepts(const ConvGeometry& g);

// Each returns nullptr with an OK status when it cannot run this op; an error status is a real
// failure (out of memory, oneDNN refusing the shape).
std::unique_ptr<ConvKernel> make_bf16_conv(const pock_op_desc& op, const ConvGeometry& g, KernelScope& scope,
                                           Status* status);
std::unique_ptr<ConvKernel> make_bf16_conv_grad_input(const pock_op_desc& op, const ConvGeometry& g,
                                                      KernelScope& scope, Status* status);
std::unique_ptr<ConvKernel> make_bf16_conv_grad_weight(const pock_op_desc& op, const ConvGeometry& g,
                                                       int64_t channels, KernelScope& scope, Status* status);

}  // namespace pock::cpu
