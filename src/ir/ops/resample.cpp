// resample family schemas: Resize (ONNX's, with the output shape and the per-axis scales resolved
// at import) and ResizeGrad, its transpose, which autodiff emits.
#include <string>

#include "ir/ops/schema_helpers.hpp"
#include "kernels/params/resample.hpp"

namespace pock {
namespace {

Status check_modes(const InferContext& ctx) {
  params::ResizeMode mode;
  params::ResizeCoordinates coordinates;
  params::NearestRounding nearest;
  const std::string m(ctx.attrs->get_string("mode", "nearest"));
  if (!params::resize_mode_from_name(m, &mode)) return ctx.error("mode must be nearest, linear or cubic, got '" + m + "'");
  const std::string c(ctx.attrs->get_string("coordinate_transformation_mode", "half_pixel"));
  if (!params::resize_coordinates_from_name(c, &coordinates)) {
    return ctx.error("coordinate_transformation_mode must be half_pixel, pytorch_half_pixel, align_corners, asymmetric or "
                     "tf_half_pixel_for_nn, got '" + c + "'");
  }
  const std::string n(ctx.attrs->get_string("nearest_mode", "round_prefer_floor"));
  if (!params::nearest_rounding_from_name(n, &nearest)) {
    return ctx.error("nearest_mode must be round_prefer_floor, round_prefer_ceil, floor or ceil, got '" + n + "'");
  }
  return Status::ok();
}

// `small` is the input side, `large` the output side (swapped for the gradient); scales has one
// positive value per axis.
Status check_geometry(const InferContext& ctx, const Shape& small, const Shape& large) {
  if (small.size() != large.size() || small.empty()) {
    return ctx.shape_error("the input " + shape_str(small) + " and output " + shape_str(large) + " need one rank, at least 1");
  }
  for (size_t d = 0; d < small.size(); ++d) {
    if (large[d] < 1) return ctx.shape_error("output size " + shape_str(large) + " must be positive");
  }
  const std::vector<double>& scales = ctx.attrs->get_floats("scales", {});
  if (scales.size() != small.size()) {
    return ctx.error("scales must hold one value per axis of " + shape_str(small) + ", got " + std::to_string(scales.size()));
  }
  for (double s : scales) {
    if (!(s > 0.0)) return ctx.error("scales must be positive, got " + std::to_string(s));
  }
  return check_modes(ctx);
}

Status resize(InferContext& ctx) {
  POCK_RETURN_IF_ERROR(schema::require_float(ctx, 0));
  if (ctx.in(0).dtype != DType::kF32) return ctx.error(std::string("x must be f32, got ") + dtype_name(ctx.in(0).dtype));
  const Shape sizes = ctx.attrs->get_ints("sizes", {});
  POCK_RETURN_IF_ERROR(check_geometry(ctx, ctx.in(0).shape, sizes));
  ctx.outputs = {TensorType{DType::kF32, sizes}};
  return Status::ok();
}

Status resize_grad(InferContext& ctx) {
  if (ctx.in(0).dtype != DType::kF32) return ctx.error(std::string("dy must be f32, got ") + dtype_name(ctx.in(0).dtype));
  const Shape shape = ctx.attrs->get_ints("shape", {});
  POCK_RETURN_IF_ERROR(check_geometry(ctx, shape, ctx.in(0).shape));
  ctx.outputs = {TensorType{DType::kF32, shape}};
  return Status::ok();
}

}  // namespace

void register_resample_schemas(SchemaRegistry& r) {
  using schema::add;
  add(r, "Resize", 1, 1, 1, 1, resize,
      "ONNX Resize of f32 x to shape sizes; scales (one per axis) drive the coordinate mapping; mode nearest / "
      "linear / cubic, coordinate_transformation_mode, nearest_mode, cubic_coeff_a, exclude_outside as ONNX");
  add(r, "ResizeGrad", 1, 1, 1, 1, resize_grad,
      "backward of Resize: dy (the output's shape) spread onto the input shape `shape` with Resize's weights");
}

}  // namespace pock
