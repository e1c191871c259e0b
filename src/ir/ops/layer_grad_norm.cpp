// Schemas of the norm backward ops. They read the statistics the forward op saved (mean and
// inverse standard deviation) instead of recomputing them. Optional inputs come last because an
// omitted input may only follow the required ones.
#include <string>

#include "ir/ops/layer_grad_schemas.hpp"
#include "ir/ops/schema_helpers.hpp"

namespace pock {
namespace {

Status require_shape(const InferContext& ctx, size_t i, const Shape& expected, const char* what) {
  if (ctx.in(i).shape != expected) {
    return ctx.shape_error(std::string(what) + " must be " + shape_str(expected) + ", got " +
                           shape_str(ctx.in(i).shape));
  }
  return Status::ok();
}

// dy (input 0) and x (input 1) share a float dtype and a shape of rank >= min_rank.
Status require_dy_like_x(const InferContext& ctx, size_t min_rank) {
  POCK_RETURN_IF_ERROR(schema::require_float(ctx, 0));
  POCK_RETURN_IF_ERROR(schema::require_same_dtype(ctx));
  if (ctx.in(1).shape.size() < min_rank) {
    return ctx.shape_error("x must have rank >= " + std::to_string(min_rank) + ", got " + shape_str(ctx.in(1).shape));
  }
  return require_shape(ctx, 0, ctx.in(1).shape, "dy");
}

// BatchNormTrainGrad(dy, x, saved_mean [C], saved_invstd [C], gamma [C]?) -> dx, dgamma, dbeta.
Status batch_norm_train_grad(InferContext& ctx) {
  POCK_RETURN_IF_ERROR(require_dy_like_x(ctx, 2));
  const Shape channel{ctx.in(1).shape[1]};
  POCK_RETURN_IF_ERROR(require_shape(ctx, 2, channel, "saved_mean"));
  POCK_RETURN_IF_ERROR(require_shape(ctx, 3, channel, "saved_invstd"));
  if (ctx.has_in(4)) POCK_RETURN_IF_ERROR(require_shape(ctx, 4, channel, "gamma"));
  const DType dt = ctx.in(0).dtype;
  ctx.outputs = {ctx.in(1), TensorType{dt, channel}, TensorType{dt, channel}};
  return Status::ok();
}

// BatchNormParamGrad(dy, x, mean [C], invstd [C]) -> dgamma, dbeta (when dx is not wanted).
Status batch_norm_param_grad(InferContext& ctx) {
  POCK_RETURN_IF_ERROR(require_dy_like_x(ctx, 2));
  const Shape channel{ctx.in(1).shape[1]};
  POCK_RETURN_IF_ERROR(require_shape(ctx, 2, channel, "mean"));
  POCK_RETURN_IF_ERROR(require_shape(ctx, 3, channel, "invstd"));
  const DType dt = ctx.in(0).dtype;
  ctx.outputs = {TensorType{dt, channel}, TensorType{dt, channel}};
  return Status::ok();
}

// Splits x's shape at `axis`: statistics have the leading part, gamma and beta the trailing one.
struct RowSplit {
  Shape rows, features;
};

Result<RowSplit> split_at_axis(const InferContext& ctx) {
  const Shape& x = ctx.in(1).shape;
  auto axis = normalize_axis(ctx.attrs->get_int("axis", -1), static_cast<int>(x.size()));
  if (!axis.is_ok()) return ctx.error(axis.status().message());
  return RowSplit{Shape(x.begin(), x.begin() + axis.value()), Shape(x.begin() + axis.value(), x.end())};
}

// LayerNormGrad(dy, x, mean, invstd, gamma?) -> dx, dgamma, dbeta; attribute axis.
Status layer_norm_grad(InferContext& ctx) {
  POCK_RETURN_IF_ERROR(require_dy_like_x(ctx, 1));
  POCK_ASSIGN_OR_RETURN(RowSplit split, split_at_axis(ctx));
  POCK_RETURN_IF_ERROR(require_shape(ctx, 2, split.rows, "mean"));
  POCK_RETURN_IF_ERROR(require_shape(ctx, 3, split.rows, "invstd"));
  if (ctx.has_in(4)) POCK_RETURN_IF_ERROR(require_shape(ctx, 4, split.features, "gamma"));
  const DType dt = ctx.in(0).dtype;
  ctx.outputs = {ctx.in(1), TensorType{dt, split.features}, TensorType{dt, split.features}};
  return Status::ok();
}

// RMSNormGrad(dy, x, invrms, gamma?) -> dx, dgamma; attribute axis.
Status rms_norm_grad(InferContext& ctx) {
  POCK_RETURN_IF_ERROR(require_dy_like_x(ctx, 1));
  POCK_ASSIGN_OR_RETURN(RowSplit split, split_at_axis(ctx));
  POCK_RETURN_IF_ERROR(require_shape(ctx, 2, split.rows, "invrms"));
  if (ctx.has_in(3)) POCK_RETURN_IF_ERROR(require_shape(ctx, 3, split.features, "gamma"));
  ctx.outputs = {ctx.in(1), TensorType{ctx.in(0).dtype, split.features}};
  return Status::ok();
}

// SoftmaxGrad / LogSoftmaxGrad (dy, y) -> dx; attribute axis.
Status softmax_grad(InferContext& ctx) {
  POCK_RETURN_IF_ERROR(require_dy_like_x(ctx, 1));
  auto axis = normalize_axis(ctx.attrs->get_int("axis", -1), static_cast<int>(ctx.in(1).shape.size()));
  if (!axis.is_ok()) return ctx.error(axis.status().message());
  ctx.outputs = {ctx.in(1)};
  return Status::ok();
}

}  // namespace

void register_norm_grad_schemas(SchemaRegistry& r) {
  using schema::add;
  add(r, "BatchNormTrainGrad", 4, 5, 3, 3, batch_norm_train_grad,
      "BatchNormTrain backward (dy, x, saved_mean, saved_invstd, gamma?) -> dx, dgamma, dbeta; batch statistics");
  add(r, "BatchNormParamGrad", 4, 4, 2, 2, batch_norm_param_grad,
      "dgamma, dbeta of a batch norm (dy, x, mean, invstd): sums of dy * xhat and dy per channel");
  add(r, "LayerNormGrad", 4, 5, 3, 3, layer_norm_grad,
      "LayerNorm backward (dy, x, mean, invstd, gamma?) -> dx, dgamma, dbeta; axis");
  add(r, "RMSNormGrad", 3, 4, 2, 2, rms_norm_grad, "RMSNorm backward (dy, x, invrms, gamma?) -> dx, dgamma; axis");
  add(r, "SoftmaxGrad", 2, 2, 1, 1, softmax_grad, "Softmax backward (dy, y): y * (dy - sum(dy * y)); axis");
  add(r, "LogSoftmaxGrad", 2, 2, 1, 1, softmax_grad, "LogSoftmax backward (dy, y): dy - exp(y) * sum(dy); axis");
}

}  // namespace pock
