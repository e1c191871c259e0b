#include "ir/ops/schema_helpers.hpp"

#include <string>
#include <string_view>
#include <variant>

#include "ir/activation.hpp"

namespace pock::schema {

Status same_as_first(InferContext& ctx) {
  ctx.outputs = {ctx.in(0)};
  return Status::ok();
}

Status require_float(const InferContext& ctx, size_t i) {
  if (!is_float(ctx.in(i).dtype)) {
    return ctx.error("input " + std::to_string(i) + " must be a float tensor, got " + dtype_name(ctx.in(i).dtype));
  }
  return Status::ok();
}

Status require_gemm_compute(const InferContext& ctx) {
  const AttrValue* value = ctx.attrs->find("compute");
  if (!value) return Status::ok();
  const auto* name = std::get_if<std::string>(value);
  if (!name || (*name != "f32" && *name != "bf16")) return ctx.error("attribute 'compute' must be \"f32\" or \"bf16\"");
  return Status::ok();
}

Status require_conv_compute(const InferContext& ctx) {
  POCK_RETURN_IF_ERROR(require_gemm_compute(ctx));
  const auto* compute = ctx.attrs->find("compute");
  const auto* name = compute ? std::get_if<std::string>(compute) : nullptr;
  if (name && *name == "bf16" && ctx.in(0).dtype != DType::kF32) {
    return ctx.error(std::string("compute \"bf16\" needs f32 operands, got ") + dtype_name(ctx.in(0).dtype));
  }
  return Status::ok();
}

Status require_same_dtype(const InferContext& ctx) {
  for (size_t i = 1; i < ctx.inputs.size(); ++i) {
    if (ctx.has_in(i) && ctx.in(i).dtype != ctx.in(0).dtype) {
      return ctx.error("input " + std::to_string(i) + " is " + dtype_name(ctx.in(i).dtype) + ", input 0 is " +
                       dtype_name(ctx.in(0).dtype));
    }
  }
  return Status::ok();
}

Result<DType> gemm_output_dtype(const InferContext& ctx, size_t operands) {
  POCK_RETURN_IF_ERROR(require_gemm_compute(ctx));
  const auto* compute = ctx.attrs->find("compute");
  const auto* name = compute ? std::get_if<std::string>(compute) : nullptr;
  bool mixed_f32_bf16 = name && *name == "bf16";
  for (size_t i = 0; i < operands && mixed_f32_bf16; ++i) {
    mixed_f32_bf16 = ctx.in(i).dtype == DType::kF32 || ctx.in(i).dtype == DType::kBF16;
  }
  if (!mixed_f32_bf16) {
    POCK_RETURN_IF_ERROR(require_same_dtype(ctx));
    return ctx.in(0).dtype;
  }
  for (size_t i = operands; i < ctx.inputs.size(); ++i) {
    if (ctx.has_in(i) && ctx.in(i).dtype != DType::kF32) {
      return ctx.error("input " + std::to_string(i) + " must be f32 (a compute \"bf16\" GEMM's output is f32), got " +
                       dtype_name(ctx.in(i).dtype));
    }
  }
  return DType::kF32;
}

Status broadcast_binary(InferContext& ctx) {
  POCK_RETURN_IF_ERROR(require_same_dtype(ctx));
  auto shape = broadcast_shapes(ctx.in(0).shape, ctx.in(1).shape);
  if (!shape.is_ok()) return ctx.shape_error(shape.status().message());
  ctx.outputs = {TensorType{ctx.in(0).dtype, shape.value()}};
  return Status::ok();
}

Result<int64_t> checked_numel(const InferContext& ctx, const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0 || __builtin_mul_overflow(n, d, &n)) return ctx.shape_error("shape " + shape_str(shape) + " is out of range");
  }
  return n;
}

void add(SchemaRegistry& r, const char* name, int min_in, int max_in, int min_out, int max_out, InferFn infer,
         const char* doc, std::vector<int> mutated) {
  OpSchema s;
  s.name = name;
  s.min_inputs = min_in;
  s.max_inputs = max_in;
  s.min_outputs = min_out;
  s.max_outputs = max_out;
  s.infer = infer;
  s.doc = doc;
  s.mutated_inputs = std::move(mutated);
  r.add(std::move(s));
}

Status apply_output_dtype(InferContext& ctx) {
  const std::string_view output = ctx.attrs->get_string("output_dtype", "f32");
  if (output == "f32") return Status::ok();
  if (output != "bf16") return ctx.error("output_dtype must be 'f32' or 'bf16', got '" + std::string(output) + "'");
  if (ctx.outputs.empty() || ctx.outputs[0].dtype != DType::kF32) {
    return ctx.error("output_dtype 'bf16' needs an f32 input, got " + std::string(dtype_name(ctx.in(0).dtype)));
  }
  ctx.outputs[0].dtype = DType::kBF16;
  return Status::ok();
}

Status require_activation(const InferContext& ctx) {
  const AttrValue* value = ctx.attrs->find("activation");
  if (!value) return Status::ok();
  const auto* name = std::get_if<std::string>(value);
  if (!name || !parse_activation(*name)) return ctx.error("attribute 'activation' must be \"none\", \"relu\" or \"relu6\"");
  return Status::ok();
}

}  // namespace pock::schema
