// Schemas of the sequence family.
#include "ir/ops/schema_helpers.hpp"

namespace pock {

void register_sequence_schemas(SchemaRegistry& r) { (void)r; }

}  // namespace pock
