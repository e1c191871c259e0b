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
// A convolution's (Conv2d and its input and weight gradients) attribute 'compute', as a GEMM's;
// "bf16" only over f32 operands (the kernels round them; no mixed dtypes).
Status require_conv_compute(const InferContext& ctx);
// All present inputs share input 0's dtype.
Status require_same_dtype(const InferContext& ctx);
// The fused epilogue 'activation' (ir/activation.hpp) of Conv2d, Linear and the BatchNorms:
// absent, "none", "relu" or "relu6".
Status require_activation(const InferContext& ctx);
// The dtype of a GEMM's output, from its first `operands` inputs (the matrices; a bias after them
// shares the output's dtype). With compute "bf16" each matrix may be f32 or already bf16 (the
// compiler converts an activation once for all the GEMMs that read it,
// src/compiler/lowering/bf16_operands.hpp) and the sums, so the output, are f32. Otherwise every
// input shares input 0's dtype, which the output has.
Result<DType> gemm_output_dtype(const InferContext& ctx, size_t operands);
// Attribute 'output_dtype' of an op that may write the bf16 copy of a bf16 GEMM operand itself
// (src/compiler/lowering/bf16_producers.hpp): absent or "f32" leaves output 0 as inferred; "bf16",
// for an f32 output, makes it bf16 (the f32 result rounded to nearest even).
Status apply_output_dtype(InferContext& ctx);
// Registers a schema in one line.
void add(SchemaRegistry& r, const char* name, int min_in, int max_in, int min_out, int max_out, InferFn infer,
         const char* doc, std::vector<int> mutated = {});

}  // namespace pock::schema
