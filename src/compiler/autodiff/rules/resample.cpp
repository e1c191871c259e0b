// Reverse-mode rule of the resample family: Resize is linear in x, so its gradient is the
// transpose of its weights (ResizeGrad, the same attributes and the input's shape).
#include "compiler/autodiff/grad_rule.hpp"

namespace pock {
namespace {

Status resize(GradContext& ctx) {
  if (ctx.dy(0) == kNoTensor || !ctx.needs(0)) return Status::ok();
  Attrs attrs = ctx.attrs();
  attrs.set("shape", ctx.desc(ctx.x(0)).shape);
  ctx.set_dx(0, ctx.emit1("ResizeGrad", {ctx.dy(0)}, std::move(attrs)));
  return ctx.status();
}

}  // namespace

void register_resample_gradients(GradRegistry& r) { r.add("Resize", resize); }

}  // namespace pock
