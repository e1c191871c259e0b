// Gradient rules of the reduce family: the reduced gradient broadcast back over the reduced axes
// (ReduceSumGrad), times what each element contributes.
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

// A reduced tensor (dy, or the forward output) broadcast back to the input's shape.
TensorId broadcast_back(GradContext& c, TensorId reduced, double scale = 1.0) {
  return c.emit1("ReduceSumGrad", {reduced}, broadcast_attrs(c, scale));
}

Status reduce_sum_grad(GradContext& c) {
  c.set_dx(0, broadcast_back(c, c.dy(0)));
  return Status::ok();
}

Status reduce_mean_grad(GradContext& c) {
  const double count = static_cast<double>(numel(c.desc(c.x(0)).shape)) / static_cast<double>(numel(c.desc(c.y(0)).shape));
  c.set_dx(0, broadcast_back(c, c.dy(0), 1.0 / count));
  return Status::ok();
}

// Max and min: dy goes to the elements equal to the result, split evenly among ties.
Status reduce_extremum_grad(GradContext& c) {
  c.set_dx(0, c.emit1("ReduceMaxGrad", {c.dy(0), c.x(0), c.y(0)}, c.attrs()));
  return Status::ok();
}

Status reduce_prod_grad(GradContext& c) {
  c.set_dx(0, c.emit1("ReduceProdGrad", {c.dy(0), c.x(0)}, c.attrs()));
  return Status::ok();
}

// d(sum x^2)/dx = 2x
Status reduce_sum_square_grad(GradContext& c) {
  c.set_dx(0, c.emit1("Mul", {broadcast_back(c, c.dy(0), 2.0), c.x(0)}));
  return Status::ok();
}

// d(sum |x|)/dx = sign(x), 0 at 0 as AbsGrad (PyTorch) has it.
Status reduce_l1_grad(GradContext& c) {
  c.set_dx(0, c.emit1("AbsGrad", {broadcast_back(c, c.dy(0)), c.x(0)}));
  return Status::ok();
}

// d(sqrt(sum x^2))/dx = x / y; a group of zeros has no gradient (NaN, as 0/0 gives).
Status reduce_l2_grad(GradContext& c) {
  const TensorId dy_over_y = c.emit1("Div", {c.dy(0), c.y(0)});
  c.set_dx(0, c.emit1("Mul", {broadcast_back(c, dy_over_y), c.x(0)}));
  return Status::ok();
}

// d(log sum x)/dx = 1 / sum x = exp(-y)
Status reduce_log_sum_grad(GradContext& c) {
  const TensorId sum = c.emit1("Exp", {c.y(0)});
  c.set_dx(0, broadcast_back(c, c.emit1("Div", {c.dy(0), sum})));
  return Status::ok();
}

// d(log sum exp x)/dx = exp(x - y): the softmax over the group, which stays finite.
Status reduce_log_sum_exp_grad(GradContext& c) {
  const TensorId shifted = c.emit1("Sub", {c.x(0), broadcast_back(c, c.y(0))});
  c.set_dx(0, c.emit1("Mul", {broadcast_back(c, c.dy(0)), c.emit1("Exp", {shifted})}));
  return Status::ok();
}

}  // namespace

void register_reduce_gradients(GradRegistry& r) {
  r.add("ReduceSum", reduce_sum_grad);
  r.add("ReduceMean", reduce_mean_grad);
  r.add("ReduceMax", reduce_extremum_grad);
  r.add("ReduceMin", reduce_extremum_grad);
  r.add("ReduceProd", reduce_prod_grad);
  r.add("ReduceSumSquare", reduce_sum_square_grad);
  r.add("ReduceL1", reduce_l1_grad);
  r.add("ReduceL2", reduce_l2_grad);
  r.add("ReduceLogSum", reduce_log_sum_grad);
  r.add("ReduceLogSumExp", reduce_log_sum_exp_grad);
}

}  // namespace pock
