// Elementwise ops: broadcast binary arithmetic, unary math and activations, Where, Cast.
#include "ir/ops/schema_helpers.hpp"

namespace pock {
namespace {

Status unary_float(InferContext& ctx) {
  POCK_RETURN_IF_ERROR(schema::require_float(ctx, 0));
  return schema::same_as_first(ctx);
}

Status binary_float(InferContext& ctx) {
  POCK_RETURN_IF_ERROR(schema::broadcast_binary(ctx));
  return schema::apply_output_dtype(ctx);  // a bf16 GEMM operand's copy (Mul, Div, ...)
}

Status clip(InferContext& ctx) {
  POCK_RETURN_IF_ERROR(schema::require_float(ctx, 0));
  if (ctx.attrs->has("min") && ctx.attrs->has("max") && ctx.attrs->get_float("min", 0.0) > ctx.attrs->get_float("max", 0.0)) {
    return ctx.error("min is greater than max");
  }
  return schema::same_as_first(ctx);
}

// output_dtype "bf16": the output is the bf16 copy that bf16 GEMMs read, rounded from f32 results
// (recipe precision bf16, src/compiler/lowering/bf16_producers.hpp).
Status gelu(InferContext& ctx) {
  const std::string_view mode = ctx.attrs->get_string("approximate", "none");
  if (mode != "none" && mode != "tanh") return ctx.error("approximate must be 'none' or 'tanh', got '" + std::string(mode) + "'");
  POCK_RETURN_IF_ERROR(unary_float(ctx));
  return schema::apply_output_dtype(ctx);
}

Status celu(InferContext& ctx) {
  if (ctx.attrs->get_float("alpha", 1.0) == 0.0) return ctx.error("alpha must not be 0 (Celu divides by it)");
  return unary_float(ctx);
}

// ONNX's unidirectional broadcast: the slope broadcasts to x (one per channel: [C, 1, 1]); y has x's shape.
Status prelu(InferContext& ctx) {
  POCK_RETURN_IF_ERROR(schema::require_float(ctx, 0));
  POCK_RETURN_IF_ERROR(schema::require_same_dtype(ctx));
  auto s = broadcast_shapes(ctx.in(0).shape, ctx.in(1).shape);
  if (!s.is_ok() || s.value() != ctx.in(0).shape) {
    return ctx.shape_error("slope " + shape_str(ctx.in(1).shape) + " does not broadcast to the input " + shape_str(ctx.in(0).shape));
  }
  return schema::same_as_first(ctx);
}

Status where(InferContext& ctx) {
  if (ctx.in(0).dtype != DType::kBool) return ctx.error("condition must be bool");
  if (ctx.in(1).dtype != ctx.in(2).dtype) return ctx.error("branches must share a dtype");
  auto s = broadcast_shapes(ctx.in(0).shape, ctx.in(1).shape);
  if (!s.is_ok()) return ctx.shape_error(s.status().message());
  auto s2 = broadcast_shapes(s.value(), ctx.in(2).shape);
  if (!s2.is_ok()) return ctx.shape_error(s2.status().message());
  ctx.outputs = {TensorType{ctx.in(1).dtype, s2.value()}};
  return Status::ok();
}

Status cast(InferContext& ctx) {
  const std::string_view to = ctx.attrs->get_string("to", "");
  auto dt = dtype_from_name(to);
  if (!dt.is_ok()) return ctx.error("attribute 'to' must name a dtype, got '" + std::string(to) + "'");
  ctx.outputs = {TensorType{dt.value(), ctx.in(0).shape}};
  return Status::ok();
}

Status identity(InferContext& ctx) { return schema::same_as_first(ctx); }

}  // namespace

void register_elementwise_schemas(SchemaRegistry& r) {
  using schema::add;
  // Mod is ONNX's Mod with fmod = 0 (floored, the sign of the divisor), Fmod with fmod = 1 (C's fmod).
  static const char* const kBinary[] = {"Add", "Sub", "Mul", "Div", "Pow", "Maximum", "Minimum", "Mod", "Fmod"};
  static const char* const kUnary[] = {"Neg", "Exp", "Log", "Sqrt", "Rsqrt", "Abs", "Reciprocal", "Square", "Relu",
                                       "Sigmoid", "Tanh", "Silu", "HardSwish", "HardSigmoid"};
  for (const char* op : kBinary) add(r, op, 2, 2, 1, 1, binary_float, "numpy-broadcast binary arithmetic; output_dtype = 'f32' or 'bf16'");
  for (const char* op : kUnary) add(r, op, 1, 1, 1, 1, unary_float, "unary elementwise");
  add(r, "Relu6", 1, 1, 1, 1, unary_float, "min(max(x, 0), 6)");
  add(r, "Clip", 1, 1, 1, 1, clip, "clamp to [min, max] (attributes; absent bound = unbounded)");
  add(r, "Gelu", 1, 1, 1, 1, gelu, "GELU; approximate = 'none' (erf) or 'tanh'; output_dtype = 'f32' or 'bf16'");
  add(r, "LeakyRelu", 1, 1, 1, 1, unary_float, "x if x > 0 else alpha * x");
  add(r, "Where", 3, 3, 1, 1, where, "cond ? a : b with broadcast");
  add(r, "Cast", 1, 1, 1, 1, cast, "convert to dtype 'to'");
  add(r, "Identity", 1, 1, 1, 1, identity, "copy");
  add(r, "Elu", 1, 1, 1, 1, unary_float, "x if x > 0 else alpha (exp(x) - 1); alpha defaults to 1");
  add(r, "Selu", 1, 1, 1, 1, unary_float, "gamma (x if x > 0 else alpha (exp(x) - 1)); ONNX's alpha and gamma by default");
  add(r, "Celu", 1, 1, 1, 1, celu, "max(0, x) + min(0, alpha (exp(x / alpha) - 1)); alpha defaults to 1");
  add(r, "Softplus", 1, 1, 1, 1, unary_float, "log(1 + exp(x))");
  add(r, "Softsign", 1, 1, 1, 1, unary_float, "x / (1 + |x|)");
  add(r, "ThresholdedRelu", 1, 1, 1, 1, unary_float, "x if x > alpha else 0; alpha defaults to 1");
  add(r, "Mish", 1, 1, 1, 1, unary_float, "x tanh(softplus(x))");
  add(r, "PRelu", 2, 2, 1, 1, prelu, "(x, slope): x if x > 0 else slope x; the slope broadcasts to x");
  // Scale by a constant: y = x * alpha + beta (attributes). Autodiff and fusion emit it.
  add(r, "ScaleShift", 1, 1, 1, 1, unary_float, "x * alpha + beta");

  // These kernels read element i before writing element i, so output 0 may take input 0's
  // buffer when input 0 dies here (the planner checks sizes and lifetimes).
  for (const char* op : kBinary) r.set_inplace(op, 0);
  for (const char* op : kUnary) r.set_inplace(op, 0);
  for (const char* op : {"Relu6", "Clip", "Gelu", "LeakyRelu", "ScaleShift", "Identity"}) r.set_inplace(op, 0);
  for (const char* op : {"Elu", "Selu", "Celu", "Softplus", "Softsign", "ThresholdedRelu", "Mish", "PRelu"}) r.set_inplace(op, 0);
}

}  // namespace pock
