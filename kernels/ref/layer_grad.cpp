// Reference kernels of the layer_grad family (backward-only ops of conv, norm, shape, sequence).
#include "kernels/ref/layer_grad.hpp"

namespace pock {

void register_ref_layer_grad(KernelTable& t) {
  register_ref_conv_grad(t);
  register_ref_norm_grad(t);
  register_ref_shape_grad(t);
  register_ref_sequence_grad(t);
}

}  // namespace pock
