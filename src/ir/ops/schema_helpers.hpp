// Small building blocks shared by the op families' shape inference.
#pragma once
#include "ir/op_schema.hpp"

namespace pock::schema {

// Output 0 has the type of input 0.
Status same_as_first(InferContext& ctx);
// Numpy broadcast of inputs 0 and 1; both must share a dtype.
Status broadcast_binary(InferContext& ctx);
// Input `i` must be a float dtype.
Status require_float(const InferContext& ctx, size_t i);
// Element count of a shape built from attributes (which come from files): an error naming the
// shape when the product overflows 64 bits.
Result<int64_t> checked_numel(const InferContext& ctx, const Shape& shape);
// A GEMM's attribute 'compute': absent or "f32", or "bf16" (operands rounded to bf16, f32 sums;
// recipe precision "bf16").
Status require_gemm_compute(const InferContext& ctx);
// All present inputs share input 0's dtype.
Status require_same_dtype(const InferContext& ctx);
// Registers a schema in one line.
void add(SchemaRegistry& r, const char* name, int min_in, int max_in, int min_out, int max_out, InferFn infer,
         const char* doc, std::vector<int> mutated = {});

}  // namespace pock::schema
