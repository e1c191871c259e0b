// Gradient rules of the linalg family.
#include "compiler/autodiff/grad_rule.hpp"

namespace pock {
namespace {

Attrs transposes(bool a, bool b) {
  return Attrs{{"transpose_a", static_cast<int64_t>(a)}, {"transpose_b", static_cast<int64_t>(b)}};
}

// y = op(a) op(b), op = optional transpose of the last two dims. With G = dy:
//   d op(a) = G op(b)ᵀ,   d op(b) = op(a)ᵀ G,
// and a transposed operand takes the transpose of that. Broadcast batch dims are summed back.
Status matmul_grad(GradContext& c) {
  const bool ta = c.attrs().get_int("transpose_a", 0) != 0;
  const bool tb = c.attrs().get_int("transpose_b", 0) != 0;
  const TensorId a = c.x(0), b = c.x(1), g = c.dy(0);
  if (c.needs(0)) {
    const Shape shape = c.desc(a).shape;
    const TensorId da = ta ? c.emit1("MatMul", {b, g}, transposes(tb, true))    // op(b) Gᵀ
                           : c.emit1("MatMul", {g, b}, transposes(false, !tb)); // G op(b)ᵀ
    c.set_dx(0, c.sum_to_shape(da, shape));
  }
  if (c.needs(1)) {
    const Shape shape = c.desc(b).shape;
    const TensorId db = tb ? c.emit1("MatMul", {g, a}, transposes(true, ta))    // Gᵀ op(a)
                           : c.emit1("MatMul", {a, g}, transposes(!ta, false)); // op(a)ᵀ G
    c.set_dx(1, c.sum_to_shape(db, shape));
  }
  return Status::ok();
}

// y = x wᵀ + b over every leading dim of x.
Status linear_grad(GradContext& c) {
  if (c.needs(0)) c.set_dx(0, c.emit1("LinearInputGrad", {c.dy(0), c.x(1)}));
  if (c.needs(1)) c.set_dx(1, c.emit1("LinearWeightGrad", {c.dy(0), c.x(0)}));
  if (c.needs(2)) {
    const Shape shape = c.desc(c.x(2)).shape;
    c.set_dx(2, c.sum_to_shape(c.dy(0), shape));
  }
  return Status::ok();
}

}  // namespace

void register_linalg_gradients(GradRegistry& r) {
  r.add("MatMul", matmul_grad);
  r.add("Linear", linear_grad);
}

}  // namespace pock
