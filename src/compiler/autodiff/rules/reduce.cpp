// Gradient rules of the reduce family: the reduced gradient broadcast back over the reduced axes.
#include "compiler/autodiff/grad_rule.hpp"

namespace pock {
namespace {

// ReduceSumGrad carries the forward's axes/keepdims plus the input shape and a scale.
Attrs broadcast_attrs(GradContext& c, double scale) {
  Attrs a = c.attrs();
  const Shape shape = c.desc(c.x(0)).shape;
  a.set("shape", std::vector<int64_t>(shape.begin(), shape.end()));
  a.set("scale", scale);
  return a;
}

Status reduce_sum_grad(GradContext& c) {
  c.set_dx(0, c.emit1("ReduceSumGrad", {c.dy(0)}, broadcast_attrs(c, 1.0)));
  return Status::ok();
}

Status reduce_mean_grad(GradContext& c) {
  const double count = static_cast<double>(numel(c.desc(c.x(0)).shape)) / static_cast<double>(numel(c.desc(c.y(0)).shape));
  c.set_dx(0, c.emit1("ReduceSumGrad", {c.dy(0)}, broadcast_attrs(c, 1.0 / count)));
  return Status::ok();
}

Status reduce_max_grad(GradContext& c) {
  c.set_dx(0, c.emit1("ReduceMaxGrad", {c.dy(0), c.x(0), c.y(0)}, c.attrs()));
  return Status::ok();
}

}  // namespace

void register_reduce_gradients(GradRegistry& r) {
  r.add("ReduceSum", reduce_sum_grad);
  r.add("ReduceMean", reduce_mean_grad);
  r.add("ReduceMax", reduce_max_grad);
}

}  // namespace pock
