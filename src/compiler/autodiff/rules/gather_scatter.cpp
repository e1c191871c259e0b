// Reverse-mode rules of the gather_scatter family. Both are written with the family's own ops: the
// transpose of an element gather is a scatter-add into zeros, and a scatter's updates receive the
// output gradient gathered back from where they were written. Indices are integers: no gradient.
#include <string>

#include "compiler/autodiff/grad_rule.hpp"

namespace pock {
namespace {

// GatherElements(data, indices): dy's elements are added back at their indices (repeated indices
// accumulate).
Status gather_elements(GradContext& ctx) {
  if (ctx.dy(0) == kNoTensor || !ctx.needs(0)) return Status::ok();
  const Shape data = ctx.desc(ctx.x(0)).shape;  // a copy: emitting nodes grows the tensor table
  const TensorId zeros = ctx.constant(0.0f, data);
  ctx.set_dx(0, ctx.emit1("ScatterElements", {zeros, ctx.x(1), ctx.dy(0)},
                          {{"axis", ctx.attrs().get_int("axis", 0)}, {"reduction", std::string("add")}}));
  return ctx.status();
}

// ScatterElements(data, indices, updates) without a reduction, or with add:
//   d updates = GatherElements(dy, indices): each update reaches the output at its index. (Without
//     a reduction, ONNX leaves repeated indices undefined; each of them is given the gradient.)
//   d data    = dy where nothing was written (none), all of dy (add).
// mul / max / min depend on the values met at run time and have no rule.
Status scatter_elements(GradContext& ctx) {
  if (ctx.dy(0) == kNoTensor) return Status::ok();
  const std::string reduction(ctx.attrs().get_string("reduction", "none"));
  if (reduction != "none" && reduction != "add") {
    ctx.fail(Status(Code::kUnsupportedOp, "ScatterElements with reduction '" + reduction +
                                            "' has no gradient rule (only none and add)"));
    return ctx.status();
  }
  const Attrs axis = {{"axis", ctx.attrs().get_int("axis", 0)}};
  if (ctx.needs(2)) ctx.set_dx(2, ctx.emit1("GatherElements", {ctx.dy(0), ctx.x(1)}, axis));
  if (ctx.needs(0)) {
    if (reduction == "add") {
      ctx.set_dx(0, ctx.dy(0));
    } else {
      const TensorId zeros = ctx.constant(0.0f, ctx.desc(ctx.x(2)).shape);
      ctx.set_dx(0, ctx.emit1("ScatterElements", {ctx.dy(0), ctx.x(1), zeros}, axis));
    }
  }
  return ctx.status();
}

}  // namespace

void register_gather_scatter_gradients(GradRegistry& r) {
  r.add("GatherElements", gather_elements);
  r.add("ScatterElements", scatter_elements);
}

}  // namespace pock
