// Reverse-mode rule of the determinant family: d det(X) / dX is X's cofactor matrix (Jacobi's
// formula), which DetGrad computes, scaled by dy.
#include "compiler/autodiff/grad_rule.hpp"

namespace pock {
namespace {

Status det(GradContext& ctx) {
  if (ctx.dy(0) == kNoTensor || !ctx.needs(0)) return Status::ok();
  ctx.set_dx(0, ctx.emit1("DetGrad", {ctx.dy(0), ctx.x(0)}));
  return ctx.status();
}

}  // namespace

void register_determinant_gradients(GradRegistry& r) { r.add("Det", det); }

}  // namespace pock
