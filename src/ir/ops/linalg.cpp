// Schemas of the linalg family: MatMul (transposes, broadcast batch dims) and Linear (PyTorch
// layout, optional bias).
#include "ir/ops/schema_helpers.hpp"

namespace pock {
namespace {

Status require_flag(const InferContext& ctx, const char* name) {
  const int64_t v = ctx.attrs->get_int(name, 0);
  if (v != 0 && v != 1) return ctx.error(std::string(name) + " must be 0 or 1, got " + std::to_string(v));
  return Status::ok();
}

Status matmul(InferContext& ctx) {
  POCK_RETURN_IF_ERROR(schema::require_float(ctx, 0));
  POCK_RETURN_IF_ERROR(require_flag(ctx, "transpose_a"));
  POCK_RETURN_IF_ERROR(require_flag(ctx, "transpose_b"));
  POCK_ASSIGN_OR_RETURN(const DType dtype, schema::gemm_output_dtype(ctx, 2));
  const Shape& a = ctx.in(0).shape;
  const Shape& b = ctx.in(1).shape;
  if (a.size() < 2 || b.size() < 2) {
    return ctx.shape_error("both operands need rank >= 2, got a " + shape_str(a) + " and b " + shape_str(b));
  }
  const bool ta = ctx.attrs->get_int("transpose_a", 0) != 0;
  const bool tb = ctx.attrs->get_int("transpose_b", 0) != 0;
  const size_t ra = a.size(), rb = b.size();
  const int64_t m = ta ? a[ra - 1] : a[ra - 2];
  const int64_t ka = ta ? a[ra - 2] : a[ra - 1];
  const int64_t kb = tb ? b[rb - 1] : b[rb - 2];
  const int64_t n = tb ? b[rb - 2] : b[rb - 1];
  if (ka != kb) {
    return ctx.shape_error("inner dimensions differ: a " + shape_str(a) + (ta ? " (transposed)" : "") + " has K=" +
                           std::to_string(ka) + ", b " + shape_str(b) + (tb ? " (transposed)" : "") + " has K=" +
                           std::to_string(kb));
  }
  auto batch = broadcast_shapes(Shape(a.begin(), a.end() - 2), Shape(b.begin(), b.end() - 2));
  if (!batch.is_ok()) return ctx.shape_error("batch dimensions: " + batch.status().message());
  Shape out = batch.value();
  out.push_back(m);
  out.push_back(n);
  ctx.outputs = {TensorType{dtype, out}};
  return Status::ok();
}

Status linear(InferContext& ctx) {
  POCK_RETURN_IF_ERROR(schema::require_float(ctx, 0));
  POCK_RETURN_IF_ERROR(schema::require_activation(ctx));
  POCK_ASSIGN_OR_RETURN(const DType dtype, schema::gemm_output_dtype(ctx, 2));
  const Shape& x = ctx.in(0).shape;
  const Shape& w = ctx.in(1).shape;
  if (x.empty()) return ctx.shape_error("x must have rank >= 1, got a scalar");
  if (w.size() != 2) return ctx.shape_error("weight must be [N, K], got " + shape_str(w));
  if (w[1] != x.back()) {
    return ctx.shape_error("weight " + shape_str(w) + " expects K=" + std::to_string(w[1]) + " input features, x " +
                           shape_str(x) + " has " + std::to_string(x.back()));
  }
  if (ctx.has_in(2) && ctx.in(2).shape != Shape{w[0]}) {
    return ctx.shape_error("bias must be [" + std::to_string(w[0]) + "], got " + shape_str(ctx.in(2).shape));
  }
  Shape out = x;
  out.back() = w[0];
  ctx.outputs = {TensorType{dtype, out}};
  return Status::ok();
}

// x f32 [..., K], w i8 [N, K], scale f32 [N], bias f32 [N]? -> y f32 [..., N] (docs/ops.md: the
// rows of x are quantized to int8 on the fly; the products accumulate in int32).
Status linear_int8(InferContext& ctx) {
  const Shape& x = ctx.in(0).shape;
  const Shape& w = ctx.in(1).shape;
  if (ctx.in(0).dtype != DType::kF32 || ctx.in(1).dtype != DType::kI8 || ctx.in(2).dtype != DType::kF32) {
    return ctx.error("needs x f32, w i8 and scale f32");
  }
  if (x.empty() || w.size() != 2 || w[1] != x.back() || ctx.in(2).shape != Shape{w[0]}) {
    return ctx.shape_error("needs x [..., K], w [N, K] and scale [N], got " + shape_str(x) + ", " + shape_str(w) + " and " +
                           shape_str(ctx.in(2).shape));
  }
  if (ctx.has_in(3) && (ctx.in(3).dtype != DType::kF32 || ctx.in(3).shape != Shape{w[0]})) {
    return ctx.shape_error("bias must be f32 [" + std::to_string(w[0]) + "], got " + shape_str(ctx.in(3).shape));
  }
  Shape out = x;
  out.back() = w[0];
  ctx.outputs = {TensorType{DType::kF32, out}};
  return Status::ok();
}

}  // namespace

void register_linalg_schemas(SchemaRegistry& r) {
  using schema::add;
  add(r, "MatMul", 2, 2, 1, 1, matmul, "a [..., M, K] @ b [..., K, N]; transpose_a/transpose_b; batch dims broadcast; compute (f32 | bf16: operands rounded to bf16, f32 sums)");
  add(r, "Linear", 2, 3, 1, 1, linear, "x [..., K] w[N, K]^T + b [N] (bias optional); activation (none | relu | relu6: fused epilogue); compute (f32 | bf16)");
  add(r, "LinearInt8", 3, 4, 1, 1, linear_int8,
      "x [..., K] f32, w [N, K] i8, scale [N], bias [N]?: rows of x quantized to int8 (symmetric, per row), "
      "int32 products, y = acc * row_scale * scale + bias; frozen int8 weights (recipe frozen_weights)");
}

}  // namespace pock
