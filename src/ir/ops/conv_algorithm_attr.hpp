// The check of the attribute "cpu_algorithm" (ir/conv_algorithm.hpp) shared by the schemas of
// the ops that carry it, so that a blob naming an unknown algorithm is refused when it opens.
#pragma once
#include "ir/op_schema.hpp"

namespace pock::schema {

// Absent, or a string naming one of the cpu convolution algorithms.
Status require_conv_algorithm(const InferContext& ctx);

}  // namespace pock::schema
