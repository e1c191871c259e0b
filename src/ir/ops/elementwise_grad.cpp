// Schemas of the elementwise_grad family (backward ops emitted by autodiff).
#include "ir/ops/schema_helpers.hpp"

namespace pock {

void register_elementwise_grad_schemas(SchemaRegistry& r) { (void)r; }

}  // namespace pock
