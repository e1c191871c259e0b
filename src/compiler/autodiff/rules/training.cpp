// Gradient rules of the training family (the losses; updates are never differentiated).
#include "compiler/autodiff/grad_rule.hpp"

namespace pock {
namespace {

Status cross_entropy_grad(GradContext& c) {
  // Labels are integers: only the logits get a gradient.
  if (c.needs(0)) c.set_dx(0, c.emit1("SoftmaxCrossEntropyGrad", {c.dy(0), c.x(0), c.x(1)}, c.attrs()));
  return Status::ok();
}

// Only log_prob gets a gradient: labels are integers, and class weights are constants in ONNX's
// losses (a trained weight is refused rather than silently left without a gradient).
Status nll_loss_grad(GradContext& c) {
  const bool weighted = c.node().inputs.size() > 2 && c.x(2) != kNoTensor;
  if (weighted && c.needs(2)) {
    return Status(Code::kUnsupportedOp, "NllLoss '" + c.node().name + "': no gradient for the class weights");
  }
  std::vector<TensorId> in{c.dy(0), c.x(0), c.x(1)};
  if (weighted) in.push_back(c.x(2));
  if (c.needs(0)) c.set_dx(0, c.emit1("NllLossGrad", in, c.attrs()));
  return Status::ok();
}

// mean((p - t)^2): d/dp = 2 (p - t) / n, d/dt = -d/dp (a target computed by the model, e.g. distillation).
Status mse_grad(GradContext& c) {
  const TensorId dp = c.emit1("MseLossGrad", {c.dy(0), c.x(0), c.x(1)});
  if (c.needs(0)) c.set_dx(0, dp);
  if (c.needs(1)) c.set_dx(1, c.emit1("Neg", {dp}));
  return Status::ok();
}

}  // namespace

void register_training_gradients(GradRegistry& r) {
  r.add("SoftmaxCrossEntropy", cross_entropy_grad);
  r.add("MseLoss", mse_grad);
  r.add("NllLoss", nll_loss_grad);
}

}  // namespace pock
