// Gradient rules of the norm family. The training forms reuse the statistics their forward node
// saved as outputs (BatchNormTrain's saved_mean / saved_invstd, LayerNorm's mean / invstd,
// RMSNorm's invrms) rather than recomputing them.
#include "compiler/autodiff/grad_rule.hpp"

namespace pock {
namespace {

// Gradients that would flow back through a saved statistic are not supported: a graph that
// consumes the statistics as values gets an error rather than a silently wrong gradient.
Status require_no_statistic_grads(GradContext& ctx) {
  for (size_t i = 1; i < ctx.node().outputs.size(); ++i) {
    if (ctx.dy(i) != kNoTensor) {
      return Status(Code::kUnsupportedOp, ctx.node().op + " '" + ctx.node().name +
                                              "': no gradient through its statistic output " + std::to_string(i));
    }
  }
  return Status::ok();
}

// Emits `op` and hands its outputs to the inputs listed in `targets` (output k -> input targets[k]).
Status emit_grads(GradContext& ctx, const char* op, std::vector<TensorId> inputs, std::vector<size_t> targets,
                  Attrs attrs = {}) {
  const std::vector<TensorId> outs = ctx.emit(op, std::move(inputs), std::move(attrs));
  for (size_t k = 0; k < targets.size() && k < outs.size(); ++k) {
    if (ctx.needs(targets[k])) ctx.set_dx(targets[k], outs[k]);
  }
  return ctx.status();
}

// When only the shift trains (bias-only schemes), dbeta = sum of dy over every axis but the
// channel axis 1: reading x (as BatchNormParamGrad does for dgamma) would keep the forward input
// alive as a saved activation that no trainable parameter needs.
Status shift_only_grad(GradContext& ctx, TensorId dy) {
  const size_t rank = ctx.desc(dy).shape.size();
  std::vector<int64_t> axes;
  for (size_t d = 0; d < rank; ++d) {
    if (d != 1) axes.push_back(static_cast<int64_t>(d));
  }
  ctx.set_dx(2, ctx.emit1("ReduceSum", {dy}, {{"axes", axes}, {"keepdims", int64_t{0}}}));
  return ctx.status();
}

// BatchNorm (inference form, frozen statistics) is a per-channel affine map of x:
// dx = dy * gamma * invstd with invstd = 1 / sqrt(running_var + eps); dgamma and dbeta are the
// same sums as in training, taken about the running mean.
Status batch_norm(GradContext& ctx) {
  POCK_RETURN_IF_ERROR(refuse_fused_activation(ctx));
  const TensorId dy = ctx.dy(0);
  if (dy == kNoTensor || !(ctx.needs(0) || ctx.needs(1) || ctx.needs(2))) return Status::ok();
  const Shape x = ctx.desc(ctx.x(0)).shape;  // a copy: emitting nodes grows the tensor table
  const double eps = ctx.attrs().get_float("eps", 1e-5);
  const TensorId invstd = ctx.emit1("Rsqrt", {ctx.emit1("ScaleShift", {ctx.x(4)}, {{"beta", eps}})});
  if (ctx.needs(0)) {
    Shape per_channel(x.size() - 1, 1);  // [C, 1, ...] broadcasts against [N, C, ...]
    per_channel[0] = x[1];
    const TensorId scale = ctx.emit1("Mul", {ctx.x(1), invstd});
    ctx.set_dx(0, ctx.emit1("Mul", {dy, ctx.emit1("Reshape", {scale}, {{"shape", per_channel}})}));
  }
  if (ctx.needs(1)) return emit_grads(ctx, "BatchNormParamGrad", {dy, ctx.x(0), ctx.x(3), invstd}, {1, 2});
  if (ctx.needs(2)) return shift_only_grad(ctx, dy);
  return ctx.status();
}

// BatchNormTrain(x, gamma, beta, running_mean, running_var) -> y, saved_mean, saved_invstd.
// The running statistics are state, not differentiable inputs.
Status batch_norm_train(GradContext& ctx) {
  POCK_RETURN_IF_ERROR(refuse_fused_activation(ctx));
  POCK_RETURN_IF_ERROR(require_no_statistic_grads(ctx));
  const TensorId dy = ctx.dy(0);
  if (dy == kNoTensor) return Status::ok();
  const TensorId x = ctx.x(0), mean = ctx.y(1), invstd = ctx.y(2);
  if (ctx.needs(0)) return emit_grads(ctx, "BatchNormTrainGrad", {dy, x, mean, invstd, ctx.x(1)}, {0, 1, 2});
  // Only the affine parameters train (e.g. bias-only updates): skip the dx computation.
  if (!ctx.needs(1) && ctx.needs(2)) return shift_only_grad(ctx, dy);
  if (ctx.needs(1) || ctx.needs(2)) return emit_grads(ctx, "BatchNormParamGrad", {dy, x, mean, invstd}, {1, 2});
  return Status::ok();
}

// The optional affine input `i` when the forward node has it; omitted otherwise.
std::vector<TensorId> with_optional(std::vector<TensorId> inputs, const GradContext& ctx, size_t i) {
  if (i < ctx.node().inputs.size() && ctx.x(i) != kNoTensor) inputs.push_back(ctx.x(i));
  return inputs;
}

// Schemas always give these ops their statistic outputs; a hand-built node without them is refused
// here instead of being indexed past its end.
Status require_outputs(const GradContext& ctx, size_t count) {
  if (ctx.node().outputs.size() >= count) return Status::ok();
  return Status(Code::kInvalidArgument, ctx.node().op + " '" + ctx.node().name + "' lacks its statistic outputs");
}

// LayerNorm(x, gamma?, beta?) -> y, mean, invstd.
Status layer_norm(GradContext& ctx) {
  POCK_RETURN_IF_ERROR(require_no_statistic_grads(ctx));
  if (ctx.dy(0) == kNoTensor) return Status::ok();
  POCK_RETURN_IF_ERROR(require_outputs(ctx, 3));
  return emit_grads(ctx, "LayerNormGrad", with_optional({ctx.dy(0), ctx.x(0), ctx.y(1), ctx.y(2)}, ctx, 1), {0, 1, 2},
                    {{"axis", ctx.attrs().get_int("axis", -1)}});
}

// RMSNorm(x, gamma?) -> y, invrms.
Status rms_norm(GradContext& ctx) {
  POCK_RETURN_IF_ERROR(require_no_statistic_grads(ctx));
  if (ctx.dy(0) == kNoTensor) return Status::ok();
  POCK_RETURN_IF_ERROR(require_outputs(ctx, 2));
  return emit_grads(ctx, "RMSNormGrad", with_optional({ctx.dy(0), ctx.x(0), ctx.y(1)}, ctx, 1), {0, 1},
                    {{"axis", ctx.attrs().get_int("axis", -1)}});
}

// Softmax and LogSoftmax differentiate through their own output y.
Status softmax_like(GradContext& ctx, const char* grad_op) {
  if (ctx.dy(0) == kNoTensor || !ctx.needs(0)) return Status::ok();
  ctx.set_dx(0, ctx.emit1(grad_op, {ctx.dy(0), ctx.y(0)}, {{"axis", ctx.attrs().get_int("axis", -1)}}));
  return ctx.status();
}

Status softmax(GradContext& ctx) { return softmax_like(ctx, "SoftmaxGrad"); }
Status log_softmax(GradContext& ctx) { return softmax_like(ctx, "LogSoftmaxGrad"); }

}  // namespace

void register_norm_gradients(GradRegistry& r) {
  r.add("BatchNorm", batch_norm);
  r.add("BatchNormTrain", batch_norm_train);
  r.add("LayerNorm", layer_norm);
  r.add("RMSNorm", rms_norm);
  r.add("Softmax", softmax);
  r.add("LogSoftmax", log_softmax);
}

}  // namespace pock
