// grid_sample family schemas: ONNX GridSample on 4-D inputs (as torch.nn.functional.grid_sample)
// and GridSampleGrad, its backward, which autodiff emits.
#include <string>

#include "ir/ops/schema_helpers.hpp"
#include "kernels/params/grid_sample.hpp"

namespace pock {
namespace {

Status check_modes(const InferContext& ctx) {
  params::GridSampleMode mode;
  params::GridPadding padding;
  const std::string m(ctx.attrs->get_string("mode", "bilinear"));
  if (!params::grid_sample_mode_from_name(m, &mode)) return ctx.error("mode must be bilinear, nearest or bicubic, got '" + m + "'");
  const std::string p(ctx.attrs->get_string("padding_mode", "zeros"));
  if (!params::grid_padding_from_name(p, &padding)) {
    return ctx.error("padding_mode must be zeros, border or reflection, got '" + p + "'");
  }
  return Status::ok();
}

// x [N, C, H, W] and grid [N, Ho, Wo, 2], both f32; returns the output shape [N, C, Ho, Wo].
Result<Shape> sampled_shape(const InferContext& ctx, const TensorType& x, const TensorType& grid) {
  if (x.dtype != DType::kF32 || grid.dtype != DType::kF32) {
    return ctx.error(std::string("x and grid must be f32, got ") + dtype_name(x.dtype) + " and " + dtype_name(grid.dtype));
  }
  if (x.shape.size() != 4) return ctx.shape_error("x must be [N, C, H, W], got " + shape_str(x.shape));
  if (grid.shape.size() != 4 || grid.shape[3] != 2 || grid.shape[0] != x.shape[0]) {
    return ctx.shape_error("grid must be [N, H_out, W_out, 2] with x's N " + std::to_string(x.shape[0]) + ", got " +
                           shape_str(grid.shape));
  }
  POCK_RETURN_IF_ERROR(check_modes(ctx));
  return Shape{x.shape[0], x.shape[1], grid.shape[1], grid.shape[2]};
}

Status grid_sample(InferContext& ctx) {
  POCK_ASSIGN_OR_RETURN(Shape out, sampled_shape(ctx, ctx.in(0), ctx.in(1)));
  ctx.outputs = {TensorType{DType::kF32, out}};
  return Status::ok();
}

// (dy, x, grid) -> (dx, dgrid).
Status grid_sample_grad(InferContext& ctx) {
  POCK_ASSIGN_OR_RETURN(Shape out, sampled_shape(ctx, ctx.in(1), ctx.in(2)));
  if (ctx.in(0).dtype != DType::kF32 || ctx.in(0).shape != out) {
    return ctx.shape_error("dy must be f32 " + shape_str(out) + ", got " + shape_str(ctx.in(0).shape));
  }
  ctx.outputs = {ctx.in(1), ctx.in(2)};
  return Status::ok();
}

}  // namespace

void register_grid_sample_schemas(SchemaRegistry& r) {
  using schema::add;
  add(r, "GridSample", 2, 2, 1, 1, grid_sample,
      "y[n, c, h, w] = x[n, c] sampled at grid[n, h, w] = (x, y) in [-1, 1]; mode bilinear / nearest / bicubic, "
      "padding_mode zeros / border / reflection, align_corners, as ONNX (and torch grid_sample)");
  add(r, "GridSampleGrad", 3, 3, 2, 2, grid_sample_grad,
      "backward of GridSample (every mode): (dy, x, grid) -> (dx, dgrid); nearest's dgrid is 0");
}

}  // namespace pock
