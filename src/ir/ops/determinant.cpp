// determinant family schemas: ONNX Det of square matrices (batched over leading axes) and
// DetGrad, its backward, which autodiff emits.
#include <string>

#include "ir/ops/schema_helpers.hpp"

namespace pock {
namespace {

Status check_square(const InferContext& ctx, const TensorType& x) {
  if (x.dtype != DType::kF32) return ctx.error(std::string("x must be f32, got ") + dtype_name(x.dtype));
  const size_t r = x.shape.size();
  if (r < 2 || x.shape[r - 1] != x.shape[r - 2]) {
    return ctx.shape_error("x must be [..., M, M] (square matrices), got " + shape_str(x.shape));
  }
  return Status::ok();
}

// [..., M, M] -> [...].
Status det(InferContext& ctx) {
  POCK_RETURN_IF_ERROR(check_square(ctx, ctx.in(0)));
  ctx.outputs = {TensorType{DType::kF32, Shape(ctx.in(0).shape.begin(), ctx.in(0).shape.end() - 2)}};
  return Status::ok();
}

// (dy [...], x [..., M, M]) -> dx [..., M, M].
Status det_grad(InferContext& ctx) {
  const TensorType& x = ctx.in(1);
  POCK_RETURN_IF_ERROR(check_square(ctx, x));
  const Shape batch(x.shape.begin(), x.shape.end() - 2);
  if (ctx.in(0).dtype != DType::kF32 || ctx.in(0).shape != batch) {
    return ctx.shape_error("dy must be f32 " + shape_str(batch) + ", got " + shape_str(ctx.in(0).shape));
  }
  ctx.outputs = {x};
  return Status::ok();
}

}  // namespace

void register_determinant_schemas(SchemaRegistry& r) {
  using schema::add;
  add(r, "Det", 1, 1, 1, 1, det, "determinant of each [M, M] matrix of x [..., M, M] (LU with partial pivoting)");
  add(r, "DetGrad", 2, 2, 1, 1, det_grad,
      "backward of Det: dx = dy * adj(x)^T, the cofactor matrix of each matrix times its dy");
}

}  // namespace pock
