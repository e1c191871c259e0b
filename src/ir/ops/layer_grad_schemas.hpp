// The layer_grad family's schemas, split by the forward family whose gradients they compute.
// register_layer_grad_schemas (layer_grad.cpp) calls each of these once.
#pragma once
#include "ir/op_schema.hpp"

namespace pock {

void register_conv_grad_schemas(SchemaRegistry& registry);      // layer_grad_conv.cpp
void register_norm_grad_schemas(SchemaRegistry& registry);      // layer_grad_norm.cpp
void register_shape_grad_schemas(SchemaRegistry& registry);     // layer_grad_shape.cpp
void register_sequence_grad_schemas(SchemaRegistry& registry);  // layer_grad_sequence.cpp

}  // namespace pock
