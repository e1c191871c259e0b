// Reverse-mode rules of the indexing family. TopK's values are x's entries at the returned
// indices, so dy scatters back to those positions (a gather_scatter op); reversing sequences is its
// own inverse, so dy is reversed the same way. Indices, lengths and OneHot have no gradient here
// (OneHot's `values` rarely trains; a model that trains them is refused by the driver).
#include "compiler/autodiff/grad_rule.hpp"

namespace pock {
namespace {

Status top_k(GradContext& ctx) {
  if (ctx.dy(0) == kNoTensor || !ctx.needs(0)) return Status::ok();
  const Shape x = ctx.desc(ctx.x(0)).shape;  // a copy: emitting nodes grows the tensor table
  const TensorId zeros = ctx.constant(0.0f, x);
  ctx.set_dx(0, ctx.emit1("ScatterElements", {zeros, ctx.y(1), ctx.dy(0)},
                          {{"axis", ctx.attrs().get_int("axis", -1)}, {"reduction", std::string("add")}}));
  return ctx.status();
}

Status reverse_sequence(GradContext& ctx) {
  if (ctx.dy(0) == kNoTensor || !ctx.needs(0)) return Status::ok();
  ctx.set_dx(0, ctx.emit1("ReverseSequence", {ctx.dy(0), ctx.x(1)}, ctx.attrs()));
  return ctx.status();
}

}  // namespace

void register_indexing_gradients(GradRegistry& r) {
  r.add("TopK", top_k);
  r.add("ReverseSequence", reverse_sequence);
}

}  // namespace pock
