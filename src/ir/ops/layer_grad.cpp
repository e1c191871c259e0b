// Schemas of the layer_grad family (backward ops emitted by autodiff).
#include "ir/ops/schema_helpers.hpp"

namespace pock {

void register_layer_grad_schemas(SchemaRegistry& r) { (void)r; }

}  // namespace pock
