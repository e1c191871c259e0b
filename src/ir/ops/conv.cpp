// Conv family schemas: Conv2d, ConvTranspose2d and the 2-D pools over NCHW images.
#include <string>
#include <variant>

#include "ir/ops/conv_algorithm_attr.hpp"
#include "ir/ops/conv_shape.hpp"
#include "ir/ops/schema_helpers.hpp"

namespace pock {
namespace {

// A list attribute of exactly `n` ints, or `fallback` when absent.
Result<std::vector<int64_t>> int_list(const InferContext& ctx, const char* name, size_t n,
                                      std::vector<int64_t> fallback) {
  const AttrValue* v = ctx.attrs->find(name);
  if (!v) return fallback;
  const auto* list = std::get_if<std::vector<int64_t>>(v);
  if (!list || list->size() != n) {
    return ctx.error(std::string("attribute '") + name + "' must be a list of " + std::to_string(n) + " ints");
  }
  return *list;
}

Status require_all(const InferContext& ctx, const char* name, const std::vector<int64_t>& values, int64_t min) {
  for (int64_t v : values) {
    if (v < min) return ctx.error(std::string("attribute '") + name + "' values must be >= " + std::to_string(min));
  }
  return Status::ok();
}

Status require_flag(const InferContext& ctx, const char* name) {
  const int64_t v = ctx.attrs->get_int(name, 0);
  if (v != 0 && v != 1) return ctx.error(std::string("attribute '") + name + "' must be 0 or 1");
  return Status::ok();
}

Status require_image(const InferContext& ctx, size_t i, const char* what) {
  if (ctx.in(i).shape.size() != 4) {
    return ctx.shape_error(std::string(what) + " must be 4-D, got " + shape_str(ctx.in(i).shape));
  }
  return Status::ok();
}

// One spatial axis of a sliding window. pad_begin/pad_end are the padding before and after.
struct WindowAxis {
  const char* name;  // "height" / "width", for messages
  int64_t input, kernel, stride, dilation, pad_begin, pad_end;
};

// Output extent of a window sliding over one padded axis. ceil_mode follows PyTorch: the last
// window is kept only if it starts inside the input or the leading padding.
Result<int64_t> output_extent(const InferContext& ctx, const WindowAxis& a, bool ceil_mode) {
  // Attributes come from files: keep every term where the arithmetic below cannot overflow.
  constexpr int64_t kLimit = int64_t{1} << 31;
  for (int64_t v : {a.input, a.kernel, a.stride, a.dilation, a.pad_begin, a.pad_end}) {
    if (v < -kLimit || v > kLimit) {
      return ctx.shape_error(std::string("window geometry along the ") + a.name + " is out of range (" + std::to_string(v) + ")");
    }
  }
  const int64_t span = a.dilation * (a.kernel - 1) + 1;
  const int64_t padded = a.input + a.pad_begin + a.pad_end;
  if (padded < span) {
    return ctx.shape_error(std::string("window of ") + std::to_string(span) + " does not fit the padded " + a.name +
                           " " + std::to_string(padded));
  }
  int64_t out = (padded - span) / a.stride + 1;
  if (ceil_mode) {
    out = (padded - span + a.stride - 1) / a.stride + 1;
    if ((out - 1) * a.stride >= a.input + a.pad_begin) --out;
  }
  return out;
}

// The data layout of x and y: "NCHW" (default) or "NHWC", which the compiler's layout pass
// (compiler/passes/layout_nhwc.cpp) sets on chains of convolutions that a channels-last library
// runs. The weight stays [O, C/groups, kh, kw] in both.
Result<bool> is_nhwc(const InferContext& ctx) {
  const AttrValue* value = ctx.attrs->find("layout");
  if (!value) return false;
  const auto* name = std::get_if<std::string>(value);
  if (!name || (*name != "NCHW" && *name != "NHWC")) {
    return ctx.error("attribute 'layout' must be \"NCHW\" or \"NHWC\"");
  }
  return *name == "NHWC";
}

// x as [N, C, H, W], whatever its layout.
Shape as_nchw(const Shape& x, bool nhwc) { return nhwc ? Shape{x[0], x[3], x[1], x[2]} : x; }

}  // namespace

Result<Shape> conv2d_output_shape(const InferContext& ctx, const Shape& x, const Shape& w) {
  POCK_ASSIGN_OR_RETURN(auto strides, int_list(ctx, "strides", 2, {1, 1}));
  POCK_ASSIGN_OR_RETURN(auto pads, int_list(ctx, "pads", 4, {0, 0, 0, 0}));
  POCK_ASSIGN_OR_RETURN(auto dilations, int_list(ctx, "dilations", 2, {1, 1}));
  POCK_RETURN_IF_ERROR(require_all(ctx, "strides", strides, 1));
  POCK_RETURN_IF_ERROR(require_all(ctx, "dilations", dilations, 1));
  POCK_RETURN_IF_ERROR(require_all(ctx, "pads", pads, 0));
  const int64_t groups = ctx.attrs->get_int("groups", 1);
  if (groups < 1) return ctx.error("groups must be >= 1, got " + std::to_string(groups));
  const int64_t channels = x[1], out_channels = w[0];
  if (channels % groups != 0 || out_channels % groups != 0) {
    return ctx.shape_error("groups " + std::to_string(groups) + " must divide input channels " +
                           std::to_string(channels) + " and output channels " + std::to_string(out_channels));
  }
  if (w[1] * groups != channels) {
    return ctx.shape_error("weight " + shape_str(w) + " needs " + std::to_string(channels / groups) +
                           " input channels per group for input " + shape_str(x) + " and groups " +
                           std::to_string(groups));
  }
  POCK_ASSIGN_OR_RETURN(int64_t out_h,
                        output_extent(ctx, {"height", x[2], w[2], strides[0], dilations[0], pads[0], pads[2]}, false));
  POCK_ASSIGN_OR_RETURN(int64_t out_w,
                        output_extent(ctx, {"width", x[3], w[3], strides[1], dilations[1], pads[1], pads[3]}, false));
  return Shape{x[0], out_channels, out_h, out_w};
}

namespace {

Status conv2d(InferContext& ctx) {
  POCK_RETURN_IF_ERROR(schema::require_float(ctx, 0));
  POCK_RETURN_IF_ERROR(schema::require_activation(ctx));
  POCK_RETURN_IF_ERROR(schema::require_conv_algorithm(ctx));
  POCK_ASSIGN_OR_RETURN(const bool nhwc, is_nhwc(ctx));
  POCK_RETURN_IF_ERROR(schema::require_same_dtype(ctx));
  POCK_RETURN_IF_ERROR(schema::require_conv_compute(ctx));
  POCK_RETURN_IF_ERROR(require_image(ctx, 0, "input x"));
  POCK_RETURN_IF_ERROR(require_image(ctx, 1, "weight w"));
  POCK_ASSIGN_OR_RETURN(const Shape nchw, conv2d_output_shape(ctx, as_nchw(ctx.in(0).shape, nhwc), ctx.in(1).shape));
  const int64_t out_channels = nchw[1];
  if (ctx.has_in(2) && ctx.in(2).shape != Shape{out_channels}) {
    return ctx.shape_error("bias must be [" + std::to_string(out_channels) + "], got " + shape_str(ctx.in(2).shape));
  }
  const Shape y = nhwc ? Shape{nchw[0], nchw[2], nchw[3], out_channels} : nchw;
  ctx.outputs = {TensorType{ctx.in(0).dtype, y}};
  return Status::ok();
}

// ConvTranspose2d(x [N, Cin, H, W], w [Cin, Cout/groups, kh, kw]) -> y [N, Cout, Ho, Wo] with
// Ho = strides (H - 1) + output_padding + dilations (kh - 1) + 1 - pad_top - pad_bottom: the
// adjoint of a Conv2d of y with the same w and window, whose output is x. output_padding must stay
// below the stride so that that Conv2d gives back exactly H (ONNX also allows up to the dilation).
Status conv_transpose2d(InferContext& ctx) {
  POCK_RETURN_IF_ERROR(schema::require_float(ctx, 0));
  POCK_RETURN_IF_ERROR(schema::require_conv_algorithm(ctx));
  POCK_RETURN_IF_ERROR(schema::require_same_dtype(ctx));
  POCK_RETURN_IF_ERROR(require_image(ctx, 0, "input x"));
  POCK_RETURN_IF_ERROR(require_image(ctx, 1, "weight w"));
  const Shape& x = ctx.in(0).shape;
  const Shape& w = ctx.in(1).shape;
  POCK_ASSIGN_OR_RETURN(auto strides, int_list(ctx, "strides", 2, {1, 1}));
  POCK_ASSIGN_OR_RETURN(auto pads, int_list(ctx, "pads", 4, {0, 0, 0, 0}));
  POCK_ASSIGN_OR_RETURN(auto dilations, int_list(ctx, "dilations", 2, {1, 1}));
  POCK_ASSIGN_OR_RETURN(auto output_padding, int_list(ctx, "output_padding", 2, {0, 0}));
  POCK_RETURN_IF_ERROR(require_all(ctx, "strides", strides, 1));
  POCK_RETURN_IF_ERROR(require_all(ctx, "dilations", dilations, 1));
  POCK_RETURN_IF_ERROR(require_all(ctx, "pads", pads, 0));
  POCK_RETURN_IF_ERROR(require_all(ctx, "output_padding", output_padding, 0));
  for (int i = 0; i < 2; ++i) {
    if (output_padding[i] >= strides[i]) {
      return ctx.error("output_padding " + shape_str(output_padding) + " must be smaller than the strides " + shape_str(strides));
    }
  }
  const int64_t groups = ctx.attrs->get_int("groups", 1);
  if (groups < 1) return ctx.error("groups must be >= 1, got " + std::to_string(groups));
  if (w[0] != x[1] || x[1] % groups != 0) {
    return ctx.shape_error("weight " + shape_str(w) + " must be [Cin, Cout/groups, kh, kw] with Cin = " +
                           std::to_string(x[1]) + " divisible by groups " + std::to_string(groups));
  }
  constexpr int64_t kLimit = int64_t{1} << 31;  // sizes from files: keep the products below in range
  Shape y{x[0], w[1] * groups, 0, 0};
  for (int i = 0; i < 2; ++i) {
    for (int64_t v : {x[2 + i], w[2 + i], strides[i], dilations[i], pads[i], pads[i + 2]}) {
      if (v > kLimit) return ctx.shape_error("window geometry is out of range (" + std::to_string(v) + ")");
    }
    y[2 + i] = strides[i] * (x[2 + i] - 1) + output_padding[i] + dilations[i] * (w[2 + i] - 1) + 1 - pads[i] - pads[i + 2];
    if (y[2 + i] < 1) return ctx.shape_error("pads " + shape_str(pads) + " leave no output for input " + shape_str(x));
  }
  ctx.outputs = {TensorType{ctx.in(0).dtype, y}};
  return Status::ok();
}

// MaxPool2d and AvgPool2d share their window attributes. A maximum is exact on any ordered
// type, so MaxPool2d also takes the 8-bit integers ONNX's MaxPool does (u8, i8).
Status pool2d(InferContext& ctx) {
  const DType d = ctx.in(0).dtype;
  if (!(ctx.op == "MaxPool2d" && (d == DType::kU8 || d == DType::kI8))) POCK_RETURN_IF_ERROR(schema::require_float(ctx, 0));
  POCK_RETURN_IF_ERROR(require_image(ctx, 0, "input x"));
  if (!ctx.attrs->has("kernel")) return ctx.error("attribute 'kernel' [kh, kw] is required");
  POCK_ASSIGN_OR_RETURN(auto kernel, int_list(ctx, "kernel", 2, {}));
  POCK_RETURN_IF_ERROR(require_all(ctx, "kernel", kernel, 1));
  POCK_ASSIGN_OR_RETURN(auto strides, int_list(ctx, "strides", 2, kernel));
  POCK_ASSIGN_OR_RETURN(auto pads, int_list(ctx, "pads", 4, {0, 0, 0, 0}));
  POCK_RETURN_IF_ERROR(require_all(ctx, "strides", strides, 1));
  POCK_RETURN_IF_ERROR(require_all(ctx, "pads", pads, 0));
  // A pad smaller than the kernel keeps at least one real element in every window, so the max is
  // never taken over padding alone and an average never divides by zero.
  for (int i = 0; i < 4; ++i) {
    if (pads[i] >= kernel[i % 2]) {
      return ctx.error("pads " + shape_str(pads) + " must each be smaller than the kernel " + shape_str(kernel));
    }
  }
  POCK_RETURN_IF_ERROR(require_flag(ctx, "ceil_mode"));
  POCK_RETURN_IF_ERROR(require_flag(ctx, "count_include_pad"));
  const bool ceil_mode = ctx.attrs->get_int("ceil_mode", 0) != 0;
  const Shape& x = ctx.in(0).shape;
  POCK_ASSIGN_OR_RETURN(int64_t out_h,
                        output_extent(ctx, {"height", x[2], kernel[0], strides[0], 1, pads[0], pads[2]}, ceil_mode));
  POCK_ASSIGN_OR_RETURN(int64_t out_w,
                        output_extent(ctx, {"width", x[3], kernel[1], strides[1], 1, pads[1], pads[3]}, ceil_mode));
  ctx.outputs = {TensorType{ctx.in(0).dtype, {x[0], x[1], out_h, out_w}}};
  return Status::ok();
}

Status global_avg_pool(InferContext& ctx) {
  POCK_RETURN_IF_ERROR(schema::require_float(ctx, 0));
  POCK_RETURN_IF_ERROR(require_image(ctx, 0, "input x"));
  const Shape& x = ctx.in(0).shape;
  ctx.outputs = {TensorType{ctx.in(0).dtype, {x[0], x[1], 1, 1}}};
  return Status::ok();
}

}  // namespace

void register_conv_schemas(SchemaRegistry& r) {
  using schema::add;
  add(r, "Conv2d", 2, 3, 1, 1, conv2d,
      "NCHW conv: x [N,C,H,W], w [O,C/groups,kh,kw], optional b [O]; strides, pads (t,l,b,r), dilations, groups; "
      "activation (none | relu | relu6: fused epilogue); layout (NCHW | NHWC: x and y [N,H,W,C]); "
      "compute (f32 | bf16: operands rounded to bf16, f32 sums)");
  add(r, "ConvTranspose2d", 2, 2, 1, 1, conv_transpose2d,
      "transposed conv: x [N,Cin,H,W], w [Cin,Cout/groups,kh,kw]; strides, pads (t,l,b,r), dilations, groups, "
      "output_padding; the kernels are Conv2dGradInput's (y is the input gradient of a Conv2d of y with w)");
  add(r, "MaxPool2d", 1, 1, 1, 1, pool2d,
      "max over kernel windows (float, u8, i8); strides default to kernel; pads (t,l,b,r); ceil_mode");
  add(r, "AvgPool2d", 1, 1, 1, 1, pool2d, "mean over kernel windows; ceil_mode; count_include_pad");
  add(r, "GlobalAvgPool", 1, 1, 1, 1, global_avg_pool, "mean over H and W -> [N, C, 1, 1]");
}

}  // namespace pock
