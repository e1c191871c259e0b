// Gradient rules of the sequence family.
#include "compiler/autodiff/grad_rule.hpp"

namespace pock {
namespace {

bool wants_dx0(const GradContext& ctx) { return ctx.dy(0) != kNoTensor && ctx.needs(0); }

// Gather(data, indices): dy's slices are added back at their indices (an embedding's rows; a
// token seen twice gets both gradients). Indices are integers: no gradient.
Status gather(GradContext& ctx) {
  if (!wants_dx0(ctx)) return Status::ok();
  const Shape data = ctx.desc(ctx.x(0)).shape;  // a copy: emitting nodes grows the tensor table
  ctx.set_dx(
      0, ctx.emit1("GatherGrad", {ctx.dy(0), ctx.x(1)}, {{"axis", ctx.attrs().get_int("axis", 0)}, {"shape", data}}));
  return ctx.status();
}

// Rope rotates each pair by an angle: its transpose rotates by the opposite angle.
Status rope(GradContext& ctx) {
  if (!wants_dx0(ctx)) return Status::ok();
  Attrs attrs = ctx.attrs();
  attrs.set("inverse", int64_t{ctx.attrs().get_int("inverse", 0) != 0 ? 0 : 1});
  std::vector<TensorId> inputs = {ctx.dy(0)};
  if (ctx.node().inputs.size() > 1) inputs.push_back(ctx.x(1));  // the same positions
  ctx.set_dx(0, ctx.emit1("Rope", std::move(inputs), std::move(attrs)));
  return ctx.status();
}

// CausalMask overwrites the masked scores: nothing flows back to them.
Status causal_mask(GradContext& ctx) {
  if (!wants_dx0(ctx)) return Status::ok();
  ctx.set_dx(0, ctx.emit1("CausalMask", {ctx.dy(0)}, {{"value", 0.0}}));
  return ctx.status();
}

// Inference-form Dropout is the identity.
Status dropout(GradContext& ctx) {
  if (wants_dx0(ctx)) ctx.set_dx(0, ctx.dy(0));
  return Status::ok();
}

// DropoutTrain(x, step) -> y, mask: the kept elements were scaled by 1 / (1 - ratio).
Status dropout_train(GradContext& ctx) {
  if (!wants_dx0(ctx)) return Status::ok();
  ctx.set_dx(0, ctx.emit1("DropoutGrad", {ctx.dy(0), ctx.y(1)}, {{"ratio", ctx.attrs().get_float("ratio", 0.5)}}));
  return ctx.status();
}

}  // namespace

void register_sequence_gradients(GradRegistry& r) {
  r.add("Gather", gather);
  r.add("Rope", rope);
  r.add("CausalMask", causal_mask);
  r.add("Dropout", dropout);
  r.add("DropoutTrain", dropout_train);
}

}  // namespace pock
