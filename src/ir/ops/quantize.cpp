// quantize family schemas: ONNX's linear quantization on uint8 / int8 tensors (docs/ops.md).
#include <string>

#include "ir/ops/schema_helpers.hpp"

namespace pock {
namespace {

bool is_byte(DType d) { return d == DType::kU8 || d == DType::kI8; }

std::string dtype_text(DType d) { return dtype_name(d); }

// A scale (f32) and its zero point (when present, of dtype `zp_dtype`): one value, or one per
// element of x's axis `axis`.
Status check_scale(const InferContext& ctx, const Shape& x, size_t scale, size_t zero_point, DType zp_dtype) {
  const TensorType& s = ctx.in(scale);
  if (s.dtype != DType::kF32) return ctx.error("the scale must be f32, got " + dtype_text(s.dtype));
  const int64_t count = numel(s.shape);
  if (count != 1) {
    if (s.shape.size() != 1) return ctx.shape_error("a per-axis scale must be 1-D, got " + shape_str(s.shape));
    const int64_t rank = static_cast<int64_t>(x.size());
    int64_t axis = ctx.attrs->get_int("axis", 1);
    if (axis < 0) axis += rank;
    if (axis < 0 || axis >= rank) return ctx.error("axis " + std::to_string(axis) + " is out of range for " + shape_str(x));
    if (x[static_cast<size_t>(axis)] != count) {
      return ctx.shape_error("scale " + shape_str(s.shape) + " must have one value per element of axis " +
                             std::to_string(axis) + " of " + shape_str(x));
    }
  }
  if (ctx.has_in(zero_point)) {
    const TensorType& z = ctx.in(zero_point);
    if (z.dtype != zp_dtype) return ctx.error("the zero point must be " + dtype_text(zp_dtype) + ", got " + dtype_text(z.dtype));
    // One zero point may serve a per-axis scale (an absent one is imported as a single 0).
    if (z.shape != s.shape && numel(z.shape) != 1) {
      return ctx.shape_error("the zero point " + shape_str(z.shape) + " must have the scale's shape " + shape_str(s.shape) +
                             " or one element");
    }
  }
  return Status::ok();
}

// x f32, scale, zero_point (u8 | i8) -> y of the zero point's dtype.
Status quantize_linear(InferContext& ctx) {
  if (ctx.in(0).dtype != DType::kF32) return ctx.error("x must be f32, got " + dtype_text(ctx.in(0).dtype));
  const DType zp = ctx.in(2).dtype;
  if (!is_byte(zp)) return ctx.error("the zero point must be u8 or i8, got " + dtype_text(zp));
  POCK_RETURN_IF_ERROR(check_scale(ctx, ctx.in(0).shape, 1, 2, zp));
  ctx.outputs = {TensorType{zp, ctx.in(0).shape}};
  return Status::ok();
}

// x (u8 | i8 | i32), scale, zero_point? (x's dtype) -> f32.
Status dequantize_linear(InferContext& ctx) {
  const DType x = ctx.in(0).dtype;
  if (!is_byte(x) && x != DType::kI32) return ctx.error("x must be u8, i8 or i32, got " + dtype_text(x));
  POCK_RETURN_IF_ERROR(check_scale(ctx, ctx.in(0).shape, 1, 2, x));
  ctx.outputs = {TensorType{DType::kF32, ctx.in(0).shape}};
  return Status::ok();
}

// x f32 -> y u8, y_scale f32 [], y_zero_point u8 [].
Status dynamic_quantize_linear(InferContext& ctx) {
  if (ctx.in(0).dtype != DType::kF32) return ctx.error("x must be f32, got " + dtype_text(ctx.in(0).dtype));
  ctx.outputs = {TensorType{DType::kU8, ctx.in(0).shape}, TensorType{DType::kF32, {}}, TensorType{DType::kU8, {}}};
  return Status::ok();
}

// The [..., M, N] result of a [..., M, K] by [..., K, N] product with broadcast batch dims.
Result<Shape> product_shape(const InferContext& ctx, size_t a_index, size_t b_index) {
  const Shape& a = ctx.in(a_index).shape;
  const Shape& b = ctx.in(b_index).shape;
  if (a.size() < 2 || b.size() < 2) return ctx.shape_error("operands must have rank >= 2, got " + shape_str(a) + " and " + shape_str(b));
  if (a.back() != b[b.size() - 2]) return ctx.shape_error("inner dims differ: " + shape_str(a) + " @ " + shape_str(b));
  auto batch = broadcast_shapes(Shape(a.begin(), a.end() - 2), Shape(b.begin(), b.end() - 2));
  if (!batch.is_ok()) return ctx.shape_error("batch dimensions: " + batch.status().message());
  Shape out = batch.value();
  out.push_back(a[a.size() - 2]);
  out.push_back(b.back());
  return out;
}

// A zero point of a product operand: one value, or one per row of A (`rows`) / column of B.
Status check_product_zero_point(const InferContext& ctx, size_t zp, DType dtype, int64_t per, const char* what) {
  if (!ctx.has_in(zp)) return Status::ok();
  const TensorType& z = ctx.in(zp);
  if (z.dtype != dtype) return ctx.error(std::string(what) + " zero point must be " + dtype_text(dtype) + ", got " + dtype_text(z.dtype));
  const int64_t n = numel(z.shape);
  if (n != 1 && !(z.shape.size() == 1 && n == per)) {
    return ctx.shape_error(std::string(what) + " zero point must be one value or " + std::to_string(per) + ", got " +
                           shape_str(z.shape));
  }
  return Status::ok();
}

// A (u8 | i8) [..., M, K], B (u8 | i8) [..., K, N], a_zero_point?, b_zero_point? -> i32 [..., M, N].
Status matmul_integer(InferContext& ctx) {
  const DType a = ctx.in(0).dtype, b = ctx.in(1).dtype;
  if (!is_byte(a) || !is_byte(b)) return ctx.error("A and B must be u8 or i8, got " + dtype_text(a) + " and " + dtype_text(b));
  POCK_ASSIGN_OR_RETURN(Shape out, product_shape(ctx, 0, 1));
  POCK_RETURN_IF_ERROR(check_product_zero_point(ctx, 2, a, out[out.size() - 2], "A's"));
  POCK_RETURN_IF_ERROR(check_product_zero_point(ctx, 3, b, out.back(), "B's"));
  ctx.outputs = {TensorType{DType::kI32, out}};
  return Status::ok();
}

// a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale, y_zero_point -> y (y_zero_point's dtype).
Status qlinear_matmul(InferContext& ctx) {
  const DType a = ctx.in(0).dtype, b = ctx.in(3).dtype, y = ctx.in(7).dtype;
  if (!is_byte(a) || !is_byte(b) || !is_byte(y)) {
    return ctx.error("a, b and y_zero_point must be u8 or i8, got " + dtype_text(a) + ", " + dtype_text(b) + " and " + dtype_text(y));
  }
  POCK_ASSIGN_OR_RETURN(Shape out, product_shape(ctx, 0, 3));
  for (size_t scale : {size_t{1}, size_t{4}, size_t{6}}) {
    if (ctx.in(scale).dtype != DType::kF32) return ctx.error("the scales must be f32, got " + dtype_text(ctx.in(scale).dtype));
  }
  if (numel(ctx.in(1).shape) != 1 || numel(ctx.in(6).shape) != 1 || numel(ctx.in(7).shape) != 1) {
    return ctx.shape_error("a_scale, y_scale and y_zero_point must be one value each");
  }
  POCK_RETURN_IF_ERROR(check_product_zero_point(ctx, 2, a, 1, "a's"));
  const int64_t columns = out.back();
  if (numel(ctx.in(4).shape) != 1 && numel(ctx.in(4).shape) != columns) {
    return ctx.shape_error("b_scale must be one value or one per column (" + std::to_string(columns) + "), got " +
                           shape_str(ctx.in(4).shape));
  }
  POCK_RETURN_IF_ERROR(check_product_zero_point(ctx, 5, b, columns, "b's"));
  ctx.outputs = {TensorType{y, out}};
  return Status::ok();
}

}  // namespace

void register_quantize_schemas(SchemaRegistry& r) {
  using schema::add;
  add(r, "QuantizeLinear", 3, 3, 1, 1, quantize_linear,
      "ONNX QuantizeLinear: y = saturate(round_half_even(x / scale) + zero_point), per tensor or per axis; "
      "y has the zero point's dtype (u8 | i8)");
  add(r, "DequantizeLinear", 2, 3, 1, 1, dequantize_linear,
      "ONNX DequantizeLinear: y = (x - zero_point) * scale, x u8 | i8 | i32, per tensor or per axis");
  add(r, "DynamicQuantizeLinear", 1, 1, 3, 3, dynamic_quantize_linear,
      "ONNX DynamicQuantizeLinear: u8 quantization of x over [min(x, 0), max(x, 0)]; outputs y, scale, zero point");
  add(r, "MatMulInteger", 2, 4, 1, 1, matmul_integer,
      "ONNX MatMulInteger: (A - a_zero_point) @ (B - b_zero_point) with int32 sums; batch dims broadcast");
  add(r, "QLinearMatMul", 8, 8, 1, 1, qlinear_matmul,
      "ONNX QLinearMatMul: int32 sums of (a - a_zp)(b - b_zp), scaled by a_scale b_scale / y_scale, rounded half "
      "to even, plus y_zero_point, saturated");
}

}  // namespace pock
