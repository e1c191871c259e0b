// Reverse-mode rule of the grid_sample family: one backward op gives both gradients, since both
// walk the same taps of every sample.
#include "compiler/autodiff/grad_rule.hpp"

namespace pock {
namespace {

Status grid_sample(GradContext& ctx) {
  if (ctx.dy(0) == kNoTensor || (!ctx.needs(0) && !ctx.needs(1))) return Status::ok();
  const auto d = ctx.emit("GridSampleGrad", {ctx.dy(0), ctx.x(0), ctx.x(1)}, ctx.attrs());
  if (d.size() == 2) {
    if (ctx.needs(0)) ctx.set_dx(0, d[0]);
    if (ctx.needs(1)) ctx.set_dx(1, d[1]);
  }
  return ctx.status();
}

}  // namespace

void register_grid_sample_gradients(GradRegistry& r) { r.add("GridSample", grid_sample); }

}  // namespace pock
