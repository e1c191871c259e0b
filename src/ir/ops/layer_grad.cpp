// Schemas of the layer_grad family: the backward-only ops that the conv, norm, shape and sequence
// gradient rules emit. They have no gradients of their own (no second-order training).
#include "ir/ops/layer_grad_schemas.hpp"

namespace pock {

void register_layer_grad_schemas(SchemaRegistry& r) {
  register_conv_grad_schemas(r);
  register_norm_grad_schemas(r);
  register_shape_grad_schemas(r);
  register_sequence_grad_schemas(r);
}

}  // namespace pock
