// Schemas of the norm family: BatchNorm (inference and training forms), LayerNorm, RMSNorm,
// Softmax and LogSoftmax.
//
// The statistic outputs of LayerNorm (mean, invstd) and RMSNorm (invrms) are "optional" in the
// sense of ONNX: a consumer may ignore them. The schema always produces them because the output
// count must follow from inputs and attributes alone (the blob verifier re-runs inference), and
// they are small (one value per normalized row). The kernels still accept a node without them.
#include "ir/ops/schema_helpers.hpp"

namespace pock {
namespace {

Status require_eps(const InferContext& ctx, double fallback) {
  const double eps = ctx.attrs->get_float("eps", fallback);
  if (!(eps >= 0.0)) return ctx.error("eps must be >= 0, got " + std::to_string(eps));
  return Status::ok();
}

// gamma, beta, running_mean, running_var: each [C] where C = x.shape[1].
Status batch_norm_common(const InferContext& ctx) {
  POCK_RETURN_IF_ERROR(schema::require_float(ctx, 0));
  POCK_RETURN_IF_ERROR(schema::require_same_dtype(ctx));
  POCK_RETURN_IF_ERROR(require_eps(ctx, 1e-5));
  POCK_RETURN_IF_ERROR(schema::require_activation(ctx));
  const Shape& x = ctx.in(0).shape;
  if (x.size() < 2) return ctx.shape_error("x must be [N, C, ...], got " + shape_str(x));
  static const char* const kNames[] = {"x", "gamma", "beta", "running_mean", "running_var"};
  for (size_t i = 1; i < 5; ++i) {
    if (ctx.in(i).shape != Shape{x[1]}) {
      return ctx.shape_error(std::string(kNames[i]) + " must be [" + std::to_string(x[1]) + "] (the channels of x " +
                             shape_str(x) + "), got " + shape_str(ctx.in(i).shape));
    }
  }
  return Status::ok();
}

Status batch_norm(InferContext& ctx) {
  POCK_RETURN_IF_ERROR(batch_norm_common(ctx));
  return schema::same_as_first(ctx);
}

Status batch_norm_train(InferContext& ctx) {
  POCK_RETURN_IF_ERROR(batch_norm_common(ctx));
  const double momentum = ctx.attrs->get_float("momentum", 0.1);
  if (!(momentum >= 0.0 && momentum <= 1.0)) return ctx.error("momentum must be in [0, 1], got " + std::to_string(momentum));
  const Shape& x = ctx.in(0).shape;
  // The running variance is the unbiased estimate (PyTorch): it needs two values per channel.
  const int64_t per_channel = x[1] == 0 ? 0 : numel(x) / x[1];
  if (per_channel < 2) {
    return ctx.shape_error("training needs more than one value per channel, x " + shape_str(x) + " has " +
                           std::to_string(per_channel));
  }
  const TensorType stat{ctx.in(0).dtype, Shape{x[1]}};
  ctx.outputs = {ctx.in(0), stat, stat};
  return Status::ok();
}

// LayerNorm / RMSNorm: the normalized dims are x.shape[axis:]; affine inputs must match them.
Status row_norm(InferContext& ctx, size_t num_affine, double default_eps, size_t num_stats) {
  POCK_RETURN_IF_ERROR(schema::require_float(ctx, 0));
  POCK_RETURN_IF_ERROR(schema::require_same_dtype(ctx));
  POCK_RETURN_IF_ERROR(require_eps(ctx, default_eps));
  const Shape& x = ctx.in(0).shape;
  if (x.empty()) return ctx.shape_error("x must have rank >= 1, got a scalar");
  auto axis = normalize_axis(ctx.attrs->get_int("axis", -1), static_cast<int>(x.size()));
  if (!axis.is_ok()) return ctx.error(axis.status().message());
  const Shape rows(x.begin(), x.begin() + axis.value());
  const Shape normalized(x.begin() + axis.value(), x.end());
  static const char* const kNames[] = {"x", "gamma", "beta"};
  for (size_t i = 1; i <= num_affine; ++i) {
    if (ctx.has_in(i) && ctx.in(i).shape != normalized) {
      return ctx.shape_error(std::string(kNames[i]) + " must be " + shape_str(normalized) + " (x " + shape_str(x) +
                             " from axis " + std::to_string(axis.value()) + "), got " + shape_str(ctx.in(i).shape));
    }
  }
  ctx.outputs = {ctx.in(0)};
  for (size_t s = 0; s < num_stats; ++s) ctx.outputs.push_back(TensorType{ctx.in(0).dtype, rows});
  return Status::ok();
}

Status layer_norm(InferContext& ctx) { return row_norm(ctx, 2, 1e-5, 2); }
Status rms_norm(InferContext& ctx) { return row_norm(ctx, 1, 1e-6, 1); }

Status softmax(InferContext& ctx) {
  POCK_RETURN_IF_ERROR(schema::require_float(ctx, 0));
  const Shape& x = ctx.in(0).shape;
  if (x.empty()) return ctx.shape_error("x must have rank >= 1, got a scalar");
  auto axis = normalize_axis(ctx.attrs->get_int("axis", -1), static_cast<int>(x.size()));
  if (!axis.is_ok()) return ctx.error(axis.status().message());
  return schema::same_as_first(ctx);
}

}  // namespace

void register_norm_schemas(SchemaRegistry& r) {
  using schema::add;
  add(r, "BatchNorm", 5, 5, 1, 1, batch_norm, "inference form: (x - running_mean) / sqrt(running_var + eps) * gamma + beta; activation (none | relu | relu6: "
      "fused epilogue)");
  add(r, "BatchNormTrain", 5, 5, 3, 3, batch_norm_train,
      "batch statistics; outputs y, saved_mean, saved_invstd; updates running_mean and running_var in place "
      "(unbiased variance, momentum); activation (none | relu | relu6: fused epilogue on y)",
      /*mutated=*/{3, 4});
  add(r, "LayerNorm", 1, 3, 1, 3, layer_norm, "normalize x.shape[axis:]; outputs y, mean, invstd (gamma, beta optional)");
  add(r, "RMSNorm", 1, 2, 1, 2, rms_norm, "x / sqrt(mean(x^2) + eps) * gamma over x.shape[axis:]; outputs y, invrms");
  add(r, "Softmax", 1, 1, 1, 1, softmax, "exp(x - max) / sum, along axis");
  add(r, "LogSoftmax", 1, 1, 1, 1, softmax, "x - max - log(sum(exp(x - max))), along axis");
}

}  // namespace pock
