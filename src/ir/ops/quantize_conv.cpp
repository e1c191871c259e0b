// quantize_conv family schemas: ONNX's integer convolutions over uint8 / int8 NCHW images
// (docs/ops.md). The window attributes are Conv2d's (ir/ops/conv_shape.hpp).
#include <string>

#include "ir/ops/conv_shape.hpp"
#include "ir/ops/schema_helpers.hpp"

namespace pock {
namespace {

bool is_byte(DType d) { return d == DType::kU8 || d == DType::kI8; }

Status require_byte(const InferContext& ctx, size_t i, const char* what) {
  if (is_byte(ctx.in(i).dtype)) return Status::ok();
  return ctx.error(std::string(what) + " must be u8 or i8, got " + dtype_name(ctx.in(i).dtype));
}

Status require_image(const InferContext& ctx, size_t i, const char* what) {
  if (ctx.in(i).shape.size() == 4) return Status::ok();
  return ctx.shape_error(std::string(what) + " must be 4-D, got " + shape_str(ctx.in(i).shape));
}

// Input i, when present: of `dtype` with one element, or with one per output channel (`channels`
// > 0) as [channels].
Status require_per_tensor_or_channel(const InferContext& ctx, size_t i, DType dtype, int64_t channels, const char* what) {
  if (!ctx.has_in(i)) return Status::ok();
  const TensorType& t = ctx.in(i);
  if (t.dtype != dtype) return ctx.error(std::string(what) + " must be " + dtype_name(dtype) + ", got " + dtype_name(t.dtype));
  if (numel(t.shape) == 1) return Status::ok();
  if (channels > 0 && t.shape == Shape{channels}) return Status::ok();
  return ctx.shape_error(std::string(what) + " must be one value" +
                         (channels > 0 ? " or one per output channel [" + std::to_string(channels) + "]" : std::string()) +
                         ", got " + shape_str(t.shape));
}

// x and w (u8 | i8) images; the output shape of their convolution.
Result<Shape> integer_conv_shape(const InferContext& ctx, size_t x, size_t w) {
  POCK_RETURN_IF_ERROR(require_byte(ctx, x, "x"));
  POCK_RETURN_IF_ERROR(require_byte(ctx, w, "w"));
  POCK_RETURN_IF_ERROR(require_image(ctx, x, "x"));
  POCK_RETURN_IF_ERROR(require_image(ctx, w, "w"));
  return conv2d_output_shape(ctx, ctx.in(x).shape, ctx.in(w).shape);
}

// x, w, x_zero_point? (one value), w_zero_point? (one value or [O]) -> i32.
Status conv_integer(InferContext& ctx) {
  POCK_ASSIGN_OR_RETURN(Shape y, integer_conv_shape(ctx, 0, 1));
  POCK_RETURN_IF_ERROR(require_per_tensor_or_channel(ctx, 2, ctx.in(0).dtype, 0, "x_zero_point"));
  POCK_RETURN_IF_ERROR(require_per_tensor_or_channel(ctx, 3, ctx.in(1).dtype, y[1], "w_zero_point"));
  ctx.outputs = {TensorType{DType::kI32, y}};
  return Status::ok();
}

// x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point, B? -> y (y_zero_point's dtype).
Status qlinear_conv(InferContext& ctx) {
  POCK_ASSIGN_OR_RETURN(Shape y, integer_conv_shape(ctx, 0, 3));
  const int64_t channels = y[1];
  POCK_RETURN_IF_ERROR(require_byte(ctx, 7, "y_zero_point"));
  POCK_RETURN_IF_ERROR(require_per_tensor_or_channel(ctx, 1, DType::kF32, 0, "x_scale"));
  POCK_RETURN_IF_ERROR(require_per_tensor_or_channel(ctx, 2, ctx.in(0).dtype, 0, "x_zero_point"));
  POCK_RETURN_IF_ERROR(require_per_tensor_or_channel(ctx, 4, DType::kF32, channels, "w_scale"));
  POCK_RETURN_IF_ERROR(require_per_tensor_or_channel(ctx, 5, ctx.in(3).dtype, channels, "w_zero_point"));
  POCK_RETURN_IF_ERROR(require_per_tensor_or_channel(ctx, 6, DType::kF32, 0, "y_scale"));
  POCK_RETURN_IF_ERROR(require_per_tensor_or_channel(ctx, 7, ctx.in(7).dtype, 0, "y_zero_point"));
  if (ctx.has_in(8)) {
    const TensorType& b = ctx.in(8);
    if (b.dtype != DType::kI32 || b.shape != Shape{channels}) {
      return ctx.error("B must be i32 [" + std::to_string(channels) + "], got " + dtype_name(b.dtype) + " " + shape_str(b.shape));
    }
  }
  ctx.outputs = {TensorType{ctx.in(7).dtype, y}};
  return Status::ok();
}

}  // namespace

void register_quantize_conv_schemas(SchemaRegistry& r) {
  using schema::add;
  add(r, "ConvInteger", 2, 4, 1, 1, conv_integer,
      "ONNX ConvInteger over NCHW: x (u8 | i8) [N,C,H,W], w (u8 | i8) [O,C/groups,kh,kw], x_zero_point (one value), "
      "w_zero_point (one value or [O]); int32 sums of (x - x_zp)(w - w_zp), padding contributing 0; Conv2d's "
      "strides, pads, dilations, groups");
  add(r, "QLinearConv", 8, 9, 1, 1, qlinear_conv,
      "ONNX QLinearConv over NCHW: int32 sums of (x - x_zp)(w - w_zp) plus B (i32 [O]), times x_scale w_scale / "
      "y_scale (w_scale, w_zp: one value or [O]), rounded half to even, plus y_zero_point, saturated to its dtype; "
      "Conv2d's window attributes");
}

}  // namespace pock
