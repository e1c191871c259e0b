// Schemas of the conv backward ops. Each takes the forward op's window attributes unchanged plus
// what the backward op cannot see from its inputs (the forward input's shape, the kernel extent).
// Inference recomputes the forward output extent and requires dy to have it, so a backward node
// whose attributes disagree with its forward node fails when it is built, not when it runs.
#include <string>
#include <variant>

#include "ir/ops/conv_algorithm_attr.hpp"
#include "ir/ops/layer_grad_schemas.hpp"
#include "ir/ops/schema_helpers.hpp"

namespace pock {
namespace {

// A list attribute of exactly `n` ints, each >= `min`, or `fallback` when absent.
Result<std::vector<int64_t>> int_list(const InferContext& ctx, const char* name, size_t n,
                                      std::vector<int64_t> fallback, int64_t min) {
  const AttrValue* v = ctx.attrs->find(name);
  if (!v) return fallback;
  const auto* list = std::get_if<std::vector<int64_t>>(v);
  if (!list || list->size() != n) {
    return ctx.error(std::string("attribute '") + name + "' must be a list of " + std::to_string(n) + " ints");
  }
  for (int64_t value : *list) {
    if (value < min) return ctx.error(std::string("attribute '") + name + "' values must be >= " + std::to_string(min));
  }
  return *list;
}

Status require_rank4(const InferContext& ctx, const Shape& shape, const char* what) {
  if (shape.size() != 4) return ctx.shape_error(std::string(what) + " must be 4-D, got " + shape_str(shape));
  return Status::ok();
}

// The sliding-window attributes shared by Conv2d and the pools.
struct Window {
  std::vector<int64_t> kernel, strides, pads, dilations;
  bool ceil_mode = false;
};

Result<Window> conv_window(const InferContext& ctx, int64_t kernel_h, int64_t kernel_w) {
  Window w;
  w.kernel = {kernel_h, kernel_w};
  POCK_ASSIGN_OR_RETURN(w.strides, int_list(ctx, "strides", 2, {1, 1}, 1));
  POCK_ASSIGN_OR_RETURN(w.pads, int_list(ctx, "pads", 4, {0, 0, 0, 0}, 0));
  POCK_ASSIGN_OR_RETURN(w.dilations, int_list(ctx, "dilations", 2, {1, 1}, 1));
  return w;
}

Result<Window> pool_window(const InferContext& ctx) {
  if (!ctx.attrs->has("kernel")) return ctx.error("attribute 'kernel' [kh, kw] is required");
  Window w;
  POCK_ASSIGN_OR_RETURN(w.kernel, int_list(ctx, "kernel", 2, {}, 1));
  POCK_ASSIGN_OR_RETURN(w.strides, int_list(ctx, "strides", 2, w.kernel, 1));
  POCK_ASSIGN_OR_RETURN(w.pads, int_list(ctx, "pads", 4, {0, 0, 0, 0}, 0));
  w.dilations = {1, 1};
  w.ceil_mode = ctx.attrs->get_int("ceil_mode", 0) != 0;
  return w;
}

// Output extent along one axis (0 = height, 1 = width), as the forward schemas compute it.
// -1 (no output fits) also for attribute values so large that the arithmetic would overflow.
int64_t output_extent(const Window& w, int axis, int64_t input) {
  constexpr int64_t kLimit = int64_t{1} << 31;
  for (int64_t v : {input, w.kernel[axis], w.strides[axis], w.dilations[axis], w.pads[axis], w.pads[axis + 2]}) {
    if (v < -kLimit || v > kLimit) return -1;
  }
  const int64_t span = w.dilations[axis] * (w.kernel[axis] - 1) + 1;
  const int64_t padded = input + w.pads[axis] + w.pads[axis + 2];
  if (padded < span) return -1;
  const int64_t stride = w.strides[axis];
  if (!w.ceil_mode) return (padded - span) / stride + 1;
  int64_t out = (padded - span + stride - 1) / stride + 1;
  if ((out - 1) * stride >= input + w.pads[axis]) --out;  // the last window must start inside
  return out;
}

// dy must be [N, channels, out_h, out_w] for a forward input of shape `x`.
Status require_dy_fits(const InferContext& ctx, const Window& w, const Shape& x, int64_t channels, const Shape& dy) {
  const Shape expected{x[0], channels, output_extent(w, 0, x[2]), output_extent(w, 1, x[3])};
  if (dy != expected) {
    return ctx.shape_error("dy " + shape_str(dy) + " does not match the forward output " + shape_str(expected) +
                           " of input " + shape_str(x));
  }
  return Status::ok();
}

// Groups must divide both channel counts, and the weight must hold C / groups input channels.
Status require_groups_fit(const InferContext& ctx, int64_t groups, int64_t channels, int64_t out_channels,
                          int64_t weight_in_channels) {
  if (groups < 1) return ctx.error("groups must be >= 1, got " + std::to_string(groups));
  if (channels % groups != 0 || out_channels % groups != 0 || weight_in_channels * groups != channels) {
    return ctx.shape_error("groups " + std::to_string(groups) + " do not fit " + std::to_string(channels) +
                           " input channels, " + std::to_string(out_channels) + " output channels and " +
                           std::to_string(weight_in_channels) + " weight input channels");
  }
  return Status::ok();
}

Result<Shape> input_shape_attr(const InferContext& ctx) {
  if (!ctx.attrs->has("input_shape")) return ctx.error("attribute 'input_shape' [N, C, H, W] is required");
  return int_list(ctx, "input_shape", 4, {}, 0);
}

// The number of leading output channels whose gradient is wanted (partial-channel updates).
Result<int64_t> leading_channels(const InferContext& ctx, int64_t out_channels) {
  const int64_t channels = ctx.attrs->get_int("channels", out_channels);
  if (channels < 1 || channels > out_channels) {
    return ctx.error("channels must be in [1, " + std::to_string(out_channels) + "], got " + std::to_string(channels));
  }
  return channels;
}

// Conv2dGradInput(dy, w) -> dx of shape input_shape.
Status conv2d_grad_input(InferContext& ctx) {
  POCK_RETURN_IF_ERROR(schema::require_float(ctx, 0));
  POCK_RETURN_IF_ERROR(schema::require_conv_algorithm(ctx));
  POCK_RETURN_IF_ERROR(schema::require_same_dtype(ctx));
  POCK_RETURN_IF_ERROR(schema::require_conv_compute(ctx));
  const Shape& dy = ctx.in(0).shape;
  const Shape& w = ctx.in(1).shape;
  POCK_RETURN_IF_ERROR(require_rank4(ctx, dy, "dy"));
  POCK_RETURN_IF_ERROR(require_rank4(ctx, w, "weight w"));
  POCK_ASSIGN_OR_RETURN(Shape x, input_shape_attr(ctx));
  POCK_RETURN_IF_ERROR(require_groups_fit(ctx, ctx.attrs->get_int("groups", 1), x[1], w[0], w[1]));
  POCK_ASSIGN_OR_RETURN(Window window, conv_window(ctx, w[2], w[3]));
  POCK_RETURN_IF_ERROR(require_dy_fits(ctx, window, x, w[0], dy));
  ctx.outputs = {TensorType{ctx.in(0).dtype, x}};
  return Status::ok();
}

// Conv2dGradWeight(x, dy) -> dw [channels, C / groups, kh, kw].
Status conv2d_grad_weight(InferContext& ctx) {
  POCK_RETURN_IF_ERROR(schema::require_float(ctx, 0));
  POCK_RETURN_IF_ERROR(schema::require_same_dtype(ctx));
  POCK_RETURN_IF_ERROR(schema::require_conv_compute(ctx));
  const Shape& x = ctx.in(0).shape;
  const Shape& dy = ctx.in(1).shape;
  POCK_RETURN_IF_ERROR(require_rank4(ctx, x, "input x"));
  POCK_RETURN_IF_ERROR(require_rank4(ctx, dy, "dy"));
  if (!ctx.attrs->has("kernel")) return ctx.error("attribute 'kernel' [kh, kw] is required");
  POCK_ASSIGN_OR_RETURN(auto kernel, int_list(ctx, "kernel", 2, {}, 1));
  const int64_t groups = ctx.attrs->get_int("groups", 1);
  if (groups < 1) return ctx.error("groups must be >= 1, got " + std::to_string(groups));
  POCK_RETURN_IF_ERROR(require_groups_fit(ctx, groups, x[1], dy[1], x[1] / groups));
  POCK_ASSIGN_OR_RETURN(Window window, conv_window(ctx, kernel[0], kernel[1]));
  POCK_RETURN_IF_ERROR(require_dy_fits(ctx, window, x, dy[1], dy));
  POCK_ASSIGN_OR_RETURN(int64_t channels, leading_channels(ctx, dy[1]));
  ctx.outputs = {TensorType{ctx.in(0).dtype, {channels, x[1] / groups, kernel[0], kernel[1]}}};
  return Status::ok();
}

// Conv2dGradBias(dy [N, O, ...]) -> db [channels]: dy summed over everything but axis 1.
Status conv2d_grad_bias(InferContext& ctx) {
  POCK_RETURN_IF_ERROR(schema::require_float(ctx, 0));
  const Shape& dy = ctx.in(0).shape;
  if (dy.size() < 2) return ctx.shape_error("dy must have a channel axis, got " + shape_str(dy));
  POCK_ASSIGN_OR_RETURN(int64_t channels, leading_channels(ctx, dy[1]));
  ctx.outputs = {TensorType{ctx.in(0).dtype, {channels}}};
  return Status::ok();
}

// MaxPool2dGrad(dy, x) -> dx shaped like x.
Status max_pool2d_grad(InferContext& ctx) {
  POCK_RETURN_IF_ERROR(schema::require_float(ctx, 0));
  POCK_RETURN_IF_ERROR(schema::require_same_dtype(ctx));
  const Shape& x = ctx.in(1).shape;
  POCK_RETURN_IF_ERROR(require_rank4(ctx, x, "input x"));
  POCK_ASSIGN_OR_RETURN(Window window, pool_window(ctx));
  POCK_RETURN_IF_ERROR(require_dy_fits(ctx, window, x, x[1], ctx.in(0).shape));
  ctx.outputs = {ctx.in(1)};
  return Status::ok();
}

// AvgPool2dGrad(dy) -> dx of shape input_shape.
Status avg_pool2d_grad(InferContext& ctx) {
  POCK_RETURN_IF_ERROR(schema::require_float(ctx, 0));
  POCK_ASSIGN_OR_RETURN(Shape x, input_shape_attr(ctx));
  POCK_ASSIGN_OR_RETURN(Window window, pool_window(ctx));
  POCK_RETURN_IF_ERROR(require_dy_fits(ctx, window, x, x[1], ctx.in(0).shape));
  ctx.outputs = {TensorType{ctx.in(0).dtype, x}};
  return Status::ok();
}

}  // namespace

void register_conv_grad_schemas(SchemaRegistry& r) {
  using schema::add;
  add(r, "Conv2dGradInput", 2, 2, 1, 1, conv2d_grad_input,
      "dx of Conv2d: transposed convolution of dy [N,O,OH,OW] with w; Conv2d's attributes (compute too) plus "
      "input_shape");
  add(r, "Conv2dGradWeight", 2, 2, 1, 1, conv2d_grad_weight,
      "dw of Conv2d: correlation of x with dy; Conv2d's attributes plus kernel [kh,kw] and channels "
      "(leading output channels computed, default all) -> [channels, C/groups, kh, kw]");
  add(r, "Conv2dGradBias", 1, 1, 1, 1, conv2d_grad_bias,
      "db of Conv2d: dy summed over all axes but 1; channels (leading, default all)");
  add(r, "MaxPool2dGrad", 2, 2, 1, 1, max_pool2d_grad,
      "dx of MaxPool2d (dy, x): dy routed to the first maximum of each window; MaxPool2d's attributes");
  add(r, "AvgPool2dGrad", 1, 1, 1, 1, avg_pool2d_grad,
      "dx of AvgPool2d: dy spread over each window by its divisor; AvgPool2d's attributes plus input_shape");
}

}  // namespace pock
