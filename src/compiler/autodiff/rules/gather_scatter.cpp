// Reverse-mode rules of the gather_scatter family, written with the family's own ops: the transpose
// of a gather is a scatter-add into zeros, and a scatter's updates receive the output gradient
// gathered back from where they were written; ScatterND's value-dependent reductions (mul, max,
// min) have a backward op of their own, ScatterNDGrad. Indices are integers: no gradient.
#include <string>

#include "compiler/autodiff/grad_rule.hpp"

namespace pock {
namespace {

// The gradient of a gather (GatherElements, GatherND) as `scatter` adds dy back into zeros of data's
// shape where it was read (repeated indices accumulate); `attr` is the gather's one integer
// attribute (axis, batch_dims), which the scatter takes too.
Status scatter_back(GradContext& ctx, const char* scatter, const char* attr) {
  if (ctx.dy(0) == kNoTensor || !ctx.needs(0)) return Status::ok();
  const Shape data = ctx.desc(ctx.x(0)).shape;  // a copy: emitting nodes grows the tensor table
  const TensorId zeros = ctx.constant(0.0f, data);
  ctx.set_dx(0, ctx.emit1(scatter, {zeros, ctx.x(1), ctx.dy(0)},
                          {{attr, ctx.attrs().get_int(attr, 0)}, {"reduction", std::string("add")}}));
  return ctx.status();
}

Status gather_elements(GradContext& ctx) { return scatter_back(ctx, "ScatterElements", "axis"); }

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

// GatherND(data, indices): with GatherND's batch_dims, which pock's ScatterND also takes.
Status gather_nd(GradContext& ctx) { return scatter_back(ctx, "ScatterND", "batch_dims"); }

// ScatterND(data, indices, updates), as ScatterElements but by slice:
//   none, add: d updates = GatherND(dy, indices) (repeated tuples of none each get the gradient,
//     as ScatterElements' rule gives them); d data = dy with the written slices zeroed (none), or
//     dy (add).
//   mul, max, min: both from ScatterNDGrad, which replays the forward's order of updates (mul: the
//     product of every other factor; max / min: the first value that won).
Status scatter_nd(GradContext& ctx) {
  if (ctx.dy(0) == kNoTensor || (!ctx.needs(0) && !ctx.needs(2))) return Status::ok();
  const std::string reduction(ctx.attrs().get_string("reduction", "none"));
  const int64_t batch_dims = ctx.attrs().get_int("batch_dims", 0);
  if (reduction == "mul" || reduction == "max" || reduction == "min") {
    const auto d = ctx.emit("ScatterNDGrad", {ctx.dy(0), ctx.x(0), ctx.x(1), ctx.x(2)}, ctx.attrs());
    if (d.size() == 2) {
      if (ctx.needs(0)) ctx.set_dx(0, d[0]);
      if (ctx.needs(2)) ctx.set_dx(2, d[1]);
    }
    return ctx.status();
  }
  if (ctx.needs(2)) ctx.set_dx(2, ctx.emit1("GatherND", {ctx.dy(0), ctx.x(1)}, {{"batch_dims", batch_dims}}));
  if (!ctx.needs(0)) return ctx.status();
  if (reduction == "add") {
    ctx.set_dx(0, ctx.dy(0));
  } else {
    const TensorId zeros = ctx.constant(0.0f, ctx.desc(ctx.x(2)).shape);
    ctx.set_dx(0, ctx.emit1("ScatterND", {ctx.dy(0), ctx.x(1), zeros}, {{"batch_dims", batch_dims}}));
  }
  return ctx.status();
}

}  // namespace

void register_gather_scatter_gradients(GradRegistry& r) {
  r.add("GatherElements", gather_elements);
  r.add("ScatterElements", scatter_elements);
  r.add("GatherND", gather_nd);
  r.add("ScatterND", scatter_nd);
}

}  // namespace pock
