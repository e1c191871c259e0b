// roi_align family schemas: ONNX RoiAlign (each region of interest of a feature map pooled to a
// fixed [output_height, output_width] by bilinear samples) and RoiAlignGrad, its backward with
// respect to the feature map, which autodiff emits.
#include <string>

#include "ir/ops/schema_helpers.hpp"
#include "kernels/params/roi_align.hpp"

namespace pock {
namespace {

// x [N, C, H, W] f32, rois [R, 4] f32, batch_indices [R] i32/i64; returns [R, C, oh, ow].
Result<Shape> pooled_shape(const InferContext& ctx, const TensorType& x, const TensorType& rois, const TensorType& batch) {
  if (x.dtype != DType::kF32 || x.shape.size() != 4) {
    return ctx.shape_error("x must be f32 [N, C, H, W], got " + std::string(dtype_name(x.dtype)) + shape_str(x.shape));
  }
  if (rois.dtype != DType::kF32 || rois.shape.size() != 2 || rois.shape[1] != 4) {
    return ctx.shape_error("rois must be f32 [R, 4], got " + std::string(dtype_name(rois.dtype)) + shape_str(rois.shape));
  }
  if ((batch.dtype != DType::kI64 && batch.dtype != DType::kI32) || batch.shape != Shape{rois.shape[0]}) {
    return ctx.shape_error("batch_indices must be i32/i64 [" + std::to_string(rois.shape[0]) + "], got " +
                           std::string(dtype_name(batch.dtype)) + shape_str(batch.shape));
  }
  const int64_t oh = ctx.attrs->get_int("output_height", 1), ow = ctx.attrs->get_int("output_width", 1);
  if (oh < 1 || ow < 1) return ctx.error("output_height and output_width must be at least 1");
  const std::string mode(ctx.attrs->get_string("mode", "avg"));
  if (mode != "avg" && mode != "max") return ctx.error("mode must be avg or max, got '" + mode + "'");
  const std::string coordinates(ctx.attrs->get_string("coordinate_transformation_mode", "half_pixel"));
  if (coordinates != "half_pixel" && coordinates != "output_half_pixel") {
    return ctx.error("coordinate_transformation_mode must be half_pixel or output_half_pixel, got '" + coordinates + "'");
  }
  if (ctx.attrs->get_int("sampling_ratio", 0) < 0) return ctx.error("sampling_ratio must not be negative");
  return Shape{rois.shape[0], x.shape[1], oh, ow};
}

Status roi_align(InferContext& ctx) {
  POCK_ASSIGN_OR_RETURN(Shape out, pooled_shape(ctx, ctx.in(0), ctx.in(1), ctx.in(2)));
  ctx.outputs = {TensorType{DType::kF32, out}};
  return Status::ok();
}

// (dy, x, rois, batch_indices) -> dx; x is read for its shape (avg) and for each bin's winner (max).
Status roi_align_grad(InferContext& ctx) {
  POCK_ASSIGN_OR_RETURN(Shape out, pooled_shape(ctx, ctx.in(1), ctx.in(2), ctx.in(3)));
  if (ctx.in(0).dtype != DType::kF32 || ctx.in(0).shape != out) {
    return ctx.shape_error("dy must be f32 " + shape_str(out) + ", got " + shape_str(ctx.in(0).shape));
  }
  const std::string mode(ctx.attrs->get_string("mode", "avg"));
  if (mode != "avg" && mode != "max") return ctx.error("mode must be avg or max, got '" + mode + "'");
  ctx.outputs = {ctx.in(1)};
  return Status::ok();
}

}  // namespace

void register_roi_align_schemas(SchemaRegistry& r) {
  using schema::add;
  add(r, "RoiAlign", 3, 3, 1, 1, roi_align,
      "x [N, C, H, W], rois [R, 4] (x1, y1, x2, y2), batch_indices [R] -> [R, C, output_height, output_width]: each "
      "bin the avg (or max) of bilinear samples, as ONNX RoiAlign (spatial_scale, sampling_ratio, "
      "coordinate_transformation_mode)");
  add(r, "RoiAlignGrad", 4, 4, 1, 1, roi_align_grad,
      "backward of RoiAlign with respect to x: (dy, x, rois, batch_indices) -> dx, dy spread with the "
      "sampling weights (avg) or given to each bin's winning corner times its weight (max)");
}

}  // namespace pock
