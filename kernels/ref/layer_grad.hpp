// The layer_grad family's reference kernels, split by the forward family whose gradients they
// compute. register_ref_layer_grad (layer_grad.cpp) calls each of these once.
#pragma once
#include "runtime/kernel.hpp"

namespace pock {

void register_ref_conv_grad(KernelTable& table);      // layer_grad_conv.cpp
void register_ref_norm_grad(KernelTable& table);      // layer_grad_norm.cpp
void register_ref_shape_grad(KernelTable& table);     // layer_grad_shape.cpp
void register_ref_sequence_grad(KernelTable& table);  // layer_grad_sequence.cpp

namespace params {
struct WindowParams;
}
// Conv2dGradInput(dy, w) -> dx (layer_grad_conv.cpp); conv.cpp runs ConvTranspose2d(x, w), the
// same transposed convolution, through it.
Status conv2d_grad_input(const KernelCall& c, const params::WindowParams& p);

}  // namespace pock
