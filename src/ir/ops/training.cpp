// Schemas of the training family: losses and their gradients, optimizer updates (which write the
// parameter and its state in place) and the helpers of gradient accumulation and clipping.
#include <algorithm>
#include <limits>

#include "ir/ops/schema_helpers.hpp"

namespace pock {
namespace {

bool is_scalar(const TensorType& t) { return numel(t.shape) == 1; }

Status require_shape(const InferContext& ctx, size_t i, const Shape& shape, const char* role) {
  if (ctx.in(i).shape != shape) {
    return ctx.shape_error(std::string(role) + " is " + shape_str(ctx.in(i).shape) + ", expected " + shape_str(shape));
  }
  return Status::ok();
}

Status require_f32(const InferContext& ctx, size_t i, const char* role) {
  if (ctx.in(i).dtype != DType::kF32) return ctx.error(std::string(role) + " must be f32, got " + dtype_name(ctx.in(i).dtype));
  return Status::ok();
}

Status require_f32_scalar(const InferContext& ctx, size_t i, const char* role) {
  POCK_RETURN_IF_ERROR(require_f32(ctx, i, role));
  if (!is_scalar(ctx.in(i))) return ctx.shape_error(std::string(role) + " must be a scalar, got " + shape_str(ctx.in(i).shape));
  return Status::ok();
}

// logits [..., C] f32, labels [...] i64 (the logits' shape without the class axis).
Status check_cross_entropy_inputs(const InferContext& ctx, size_t logits, size_t labels) {
  POCK_RETURN_IF_ERROR(require_f32(ctx, logits, "logits"));
  const Shape& l = ctx.in(logits).shape;
  if (l.size() < 2) return ctx.shape_error("logits must be [N, C] or [N, S, C], got " + shape_str(l));
  if (ctx.in(labels).dtype != DType::kI64) return ctx.error(std::string("labels must be i64, got ") + dtype_name(ctx.in(labels).dtype));
  POCK_RETURN_IF_ERROR(require_shape(ctx, labels, Shape(l.begin(), l.end() - 1), "labels"));
  const double smoothing = ctx.attrs->get_float("label_smoothing", 0.0);
  if (!(smoothing >= 0.0 && smoothing < 1.0)) return ctx.error("label_smoothing must be in [0, 1)");
  return Status::ok();
}

Status cross_entropy(InferContext& ctx) {
  POCK_RETURN_IF_ERROR(check_cross_entropy_inputs(ctx, 0, 1));
  ctx.outputs = {TensorType{DType::kF32, {}}};
  return Status::ok();
}

Status cross_entropy_grad(InferContext& ctx) {
  POCK_RETURN_IF_ERROR(require_f32_scalar(ctx, 0, "loss gradient"));
  POCK_RETURN_IF_ERROR(check_cross_entropy_inputs(ctx, 1, 2));
  ctx.outputs = {ctx.in(1)};
  return Status::ok();
}

// log_prob [N, C, d1...] f32, labels [N, d1...] i64, weight [C] f32 (optional): ONNX's layout,
// the class axis second.
Status check_nll_inputs(const InferContext& ctx, size_t log_prob) {
  POCK_RETURN_IF_ERROR(require_f32(ctx, log_prob, "log_prob"));
  const Shape& x = ctx.in(log_prob).shape;
  if (x.size() < 2) return ctx.shape_error("log_prob must be [N, C, d1, ...], got " + shape_str(x));
  if (ctx.in(log_prob + 1).dtype != DType::kI64) {
    return ctx.error(std::string("labels must be i64, got ") + dtype_name(ctx.in(log_prob + 1).dtype));
  }
  Shape labels = x;
  labels.erase(labels.begin() + 1);
  POCK_RETURN_IF_ERROR(require_shape(ctx, log_prob + 1, labels, "labels"));
  if (ctx.has_in(log_prob + 2)) {
    POCK_RETURN_IF_ERROR(require_f32(ctx, log_prob + 2, "weight"));
    POCK_RETURN_IF_ERROR(require_shape(ctx, log_prob + 2, Shape{x[1]}, "weight"));
  }
  const std::string_view reduction = ctx.attrs->get_string("reduction", "mean");
  if (reduction != "none" && reduction != "sum" && reduction != "mean") {
    return ctx.error("reduction must be none, sum or mean, got '" + std::string(reduction) + "'");
  }
  return Status::ok();
}

// The loss: per label with reduction "none", else a scalar.
TensorType nll_loss_type(const InferContext& ctx, size_t log_prob) {
  if (ctx.attrs->get_string("reduction", "mean") != "none") return TensorType{DType::kF32, {}};
  return ctx.in(log_prob + 1);
}

Status nll_loss(InferContext& ctx) {
  POCK_RETURN_IF_ERROR(check_nll_inputs(ctx, 0));
  ctx.outputs = {TensorType{DType::kF32, nll_loss_type(ctx, 0).shape}};
  return Status::ok();
}

Status nll_loss_grad(InferContext& ctx) {
  POCK_RETURN_IF_ERROR(check_nll_inputs(ctx, 1));
  POCK_RETURN_IF_ERROR(require_f32(ctx, 0, "loss gradient"));
  POCK_RETURN_IF_ERROR(require_shape(ctx, 0, nll_loss_type(ctx, 1).shape, "loss gradient"));
  ctx.outputs = {ctx.in(1)};
  return Status::ok();
}

Status mse(InferContext& ctx) {
  POCK_RETURN_IF_ERROR(require_f32(ctx, 0, "prediction"));
  POCK_RETURN_IF_ERROR(require_f32(ctx, 1, "target"));
  POCK_RETURN_IF_ERROR(require_shape(ctx, 1, ctx.in(0).shape, "target"));
  ctx.outputs = {TensorType{DType::kF32, {}}};
  return Status::ok();
}

Status mse_grad(InferContext& ctx) {
  POCK_RETURN_IF_ERROR(require_f32_scalar(ctx, 0, "loss gradient"));
  POCK_RETURN_IF_ERROR(require_f32(ctx, 1, "prediction"));
  POCK_RETURN_IF_ERROR(require_f32(ctx, 2, "target"));
  POCK_RETURN_IF_ERROR(require_shape(ctx, 2, ctx.in(1).shape, "target"));
  ctx.outputs = {ctx.in(1)};
  return Status::ok();
}

Status accumulate_grad(InferContext& ctx) {
  POCK_RETURN_IF_ERROR(require_f32(ctx, 0, "accumulator"));
  POCK_RETURN_IF_ERROR(require_f32(ctx, 1, "gradient"));
  POCK_RETURN_IF_ERROR(require_shape(ctx, 1, ctx.in(0).shape, "gradient"));
  ctx.outputs = {};
  return Status::ok();
}

Status clip_scale(InferContext& ctx) {
  for (size_t i = 0; i < ctx.inputs.size(); ++i) POCK_RETURN_IF_ERROR(require_f32(ctx, i, "gradient"));
  if (!(ctx.attrs->get_float("max_norm", 0.0) > 0.0)) return ctx.error("max_norm must be > 0");
  ctx.outputs = {TensorType{DType::kF32, {}}};
  return Status::ok();
}

// The gradient of an update is the parameter's shape, or under a partial-channel update its
// leading k rows [k, rest...] (1 <= k <= rows): the update then covers the parameter's first
// numel(gradient) elements, the trained rows being contiguous.
Status require_leading_rows(const InferContext& ctx) {
  const Shape& p = ctx.in(0).shape;
  const Shape& g = ctx.in(1).shape;
  const bool leading_rows = !p.empty() && g.size() == p.size() && g[0] >= 1 && g[0] <= p[0] &&
                            std::equal(g.begin() + 1, g.end(), p.begin() + 1);
  if (g == p || leading_rows) return Status::ok();
  return ctx.shape_error("gradient is " + shape_str(g) + ", expected the parameter's " + shape_str(p) +
                         " or its leading rows (the same shape with a first dim in [1, " +
                         std::to_string(p.empty() ? 0 : p[0]) + "])");
}

// Checks shared by the update ops: param and grad alike, the i64 step, the learning-rate schedule.
Status check_update(const InferContext& ctx) {
  POCK_RETURN_IF_ERROR(require_f32(ctx, 0, "parameter"));
  POCK_RETURN_IF_ERROR(require_f32(ctx, 1, "gradient"));
  POCK_RETURN_IF_ERROR(require_leading_rows(ctx));
  if (ctx.in(2).dtype != DType::kI64 || !is_scalar(ctx.in(2))) return ctx.error("step must be an i64 scalar");
  const Attrs& a = *ctx.attrs;
  if (!(a.get_float("lr", 0.0) >= 0.0)) return ctx.error("lr must be >= 0");
  if (a.get_int("accumulation", 1) < 1) return ctx.error("accumulation must be >= 1");
  const std::string_view schedule = a.get_string("schedule", "constant");
  if (schedule != "constant" && schedule != "linear_warmup" && schedule != "cosine") {
    return ctx.error("schedule must be constant, linear_warmup or cosine, got '" + std::string(schedule) + "'");
  }
  if (schedule == "linear_warmup" && a.get_int("warmup_steps", 0) < 1) return ctx.error("linear_warmup needs warmup_steps >= 1");
  if (schedule == "cosine" && a.get_int("total_steps", 0) <= a.get_int("warmup_steps", 0)) {
    return ctx.error("cosine needs total_steps > warmup_steps");
  }
  return Status::ok();
}

// Optimizer state covers what the gradient covers.
Status check_state(const InferContext& ctx, size_t i, const char* role) {
  POCK_RETURN_IF_ERROR(require_f32(ctx, i, role));
  return require_shape(ctx, i, ctx.in(1).shape, role);
}

// SgdUpdate(param, grad, step, momentum_buffer?, clip_scale?)
Status sgd_update(InferContext& ctx) {
  POCK_RETURN_IF_ERROR(check_update(ctx));
  const double momentum = ctx.attrs->get_float("momentum", 0.0);
  if (momentum != 0.0 && !ctx.has_in(3)) return ctx.error("momentum needs a momentum_buffer input");
  if (ctx.has_in(3)) POCK_RETURN_IF_ERROR(check_state(ctx, 3, "momentum_buffer"));
  if (ctx.has_in(4)) POCK_RETURN_IF_ERROR(require_f32_scalar(ctx, 4, "clip scale"));
  ctx.outputs = {};
  return Status::ok();
}

// AdamUpdate(param, grad, step, exp_avg, exp_avg_sq, clip_scale?)
Status adam_update(InferContext& ctx) {
  POCK_RETURN_IF_ERROR(check_update(ctx));
  POCK_RETURN_IF_ERROR(check_state(ctx, 3, "exp_avg"));
  POCK_RETURN_IF_ERROR(check_state(ctx, 4, "exp_avg_sq"));
  if (ctx.has_in(5)) POCK_RETURN_IF_ERROR(require_f32_scalar(ctx, 5, "clip scale"));
  if (!(ctx.attrs->get_float("eps", 1e-8) > 0.0)) return ctx.error("eps must be > 0");
  ctx.outputs = {};
  return Status::ok();
}

}  // namespace

void register_training_schemas(SchemaRegistry& r) {
  using schema::add;
  constexpr int kMany = std::numeric_limits<int>::max();
  add(r, "SoftmaxCrossEntropy", 2, 2, 1, 1, cross_entropy,
      "(logits [..., C], labels i64 [...]) -> mean cross-entropy over labels != ignore_index; label_smoothing");
  add(r, "SoftmaxCrossEntropyGrad", 3, 3, 1, 1, cross_entropy_grad, "(dloss, logits, labels) -> dlogits");
  // dlogits may take the logits' buffer when nothing reads them later (the usual case): kernels
  // read each logit before writing its gradient, row by row. For a language model that buffer is
  // the largest of the step (batch x sequence x vocabulary: 100 MB for SmolLM2 at 4 x 128).
  r.set_inplace("SoftmaxCrossEntropyGrad", 1);
  add(r, "MseLoss", 2, 2, 1, 1, mse, "(prediction, target) -> mean squared error");
  add(r, "NllLoss", 2, 3, 1, 1, nll_loss,
      "(log_prob [N, C, d...], labels i64 [N, d...], weight [C]?) -> ONNX NegativeLogLikelihoodLoss; reduction "
      "none/sum/mean (mean divides by the weight of the labels counted), ignore_index");
  add(r, "NllLossGrad", 3, 4, 1, 1, nll_loss_grad, "(dloss, log_prob, labels, weight?) -> dlog_prob");
  add(r, "MseLossGrad", 3, 3, 1, 1, mse_grad, "(dloss, prediction, target) -> dprediction");
  add(r, "AccumulateGrad", 2, 2, 0, 0, accumulate_grad, "accumulator += gradient (in place)", {0});
  add(r, "GlobalNormClipScale", 1, kMany, 1, 1, clip_scale,
      "min(1, max_norm / (||grad_scale * (g0, g1, ...)||_2 + 1e-6)): the factor of clip_grad_norm_");
  r.set_variadic("GlobalNormClipScale");
  // Updates write the parameter and their state in place and output nothing. The gradient input
  // is also written (zeroed) when it is a micro-batch accumulator (accumulation > 1). A gradient
  // of the parameter's leading rows only (partial-channel update) updates just those rows.
  add(r, "SgdUpdate", 3, 5, 0, 0, sgd_update,
      "(param, grad, step, momentum_buffer?, clip_scale?): SGD with momentum / Nesterov / weight decay", {0, 1, 3});
  add(r, "AdamUpdate", 5, 6, 0, 0, adam_update,
      "(param, grad, step, exp_avg, exp_avg_sq, clip_scale?): Adam, or AdamW with decoupled=1", {0, 1, 3, 4});
}

}  // namespace pock
