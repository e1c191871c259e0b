// Reverse-mode rule of the cumulative family. y[j] = sum of x[i] over i <= j (i < j when
// exclusive) along the axis, so dx[i] = sum of dy[j] over j >= i (j > i): the same CumSum of dy
// run the other way.
#include "compiler/autodiff/grad_rule.hpp"

namespace pock {
namespace {

Status cumsum(GradContext& ctx) {
  if (ctx.dy(0) == kNoTensor || !ctx.needs(0)) return Status::ok();
  Attrs attrs = ctx.attrs();
  attrs.set("reverse", int64_t{ctx.attrs().get_int("reverse", 0) == 0});
  ctx.set_dx(0, ctx.emit1("CumSum", {ctx.dy(0)}, std::move(attrs)));
  return ctx.status();
}

}  // namespace

void register_cumulative_gradients(GradRegistry& r) { r.add("CumSum", cumsum); }

}  // namespace pock
