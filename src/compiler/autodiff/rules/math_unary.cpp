// Gradient rules of the math_unary family, composed from forward ops (no backward kernels of
// their own): each derivative is a short expression in x or y.
// Floor, Ceil, Round, Sign and Hardmax are piecewise constant: their derivative is 0 wherever it
// exists, so they pass no gradient (the op is a constant for autodiff, as in PyTorch, which
// returns zeros). IsNaN and IsInf have bool outputs, through which nothing flows.
#include <cmath>
#include <numbers>

#include "compiler/autodiff/grad_rule.hpp"

namespace pock {
namespace {

TensorId affine(GradContext& c, TensorId t, double alpha, double beta) {
  return c.emit1("ScaleShift", {t}, Attrs{{"alpha", alpha}, {"beta", beta}});
}
// alpha x^2 + beta.
TensorId square_affine(GradContext& c, TensorId x, double alpha, double beta) {
  return affine(c, c.emit1("Square", {x}), alpha, beta);
}
Status set(GradContext& c, TensorId dx) {
  c.set_dx(0, dx);
  return c.status();
}
Status times(GradContext& c, TensorId derivative) { return set(c, c.emit1("Mul", {c.dy(0), derivative})); }
Status over(GradContext& c, TensorId denominator) { return set(c, c.emit1("Div", {c.dy(0), denominator})); }

Status sin_grad(GradContext& c) { return times(c, c.emit1("Cos", {c.x(0)})); }
Status cos_grad(GradContext& c) { return set(c, c.emit1("Neg", {c.emit1("Mul", {c.dy(0), c.emit1("Sin", {c.x(0)})})})); }
Status tan_grad(GradContext& c) { return times(c, square_affine(c, c.y(0), 1.0, 1.0)); }          // 1 + tan^2
Status sinh_grad(GradContext& c) { return times(c, c.emit1("Cosh", {c.x(0)})); }
Status cosh_grad(GradContext& c) { return times(c, c.emit1("Sinh", {c.x(0)})); }
Status asin_grad(GradContext& c) { return times(c, c.emit1("Rsqrt", {square_affine(c, c.x(0), -1.0, 1.0)})); }  // 1/sqrt(1 - x^2)
Status acos_grad(GradContext& c) {
  return set(c, c.emit1("Neg", {c.emit1("Mul", {c.dy(0), c.emit1("Rsqrt", {square_affine(c, c.x(0), -1.0, 1.0)})})}));
}
Status atan_grad(GradContext& c) { return over(c, square_affine(c, c.x(0), 1.0, 1.0)); }          // 1 / (1 + x^2)
Status asinh_grad(GradContext& c) { return times(c, c.emit1("Rsqrt", {square_affine(c, c.x(0), 1.0, 1.0)})); }
Status acosh_grad(GradContext& c) { return times(c, c.emit1("Rsqrt", {square_affine(c, c.x(0), 1.0, -1.0)})); }
Status atanh_grad(GradContext& c) { return over(c, square_affine(c, c.x(0), -1.0, 1.0)); }        // 1 / (1 - x^2)
// erf'(x) = 2 / sqrt(pi) exp(-x^2).
Status erf_grad(GradContext& c) {
  const TensorId e = c.emit1("Exp", {square_affine(c, c.x(0), -1.0, 0.0)});
  return set(c, affine(c, c.emit1("Mul", {c.dy(0), e}), 2.0 / std::sqrt(std::numbers::pi), 0.0));
}
// Shrink passes dy where |x| > lambd: there Shrink(x, lambd, bias 0) is nonzero (x -+ lambd), and
// |Sign| of it is the 0/1 mask.
Status shrink_grad(GradContext& c) {
  const Attrs kink{{"lambd", c.attrs().get_float("lambd", 0.5)}, {"bias", 0.0}};
  const TensorId mask = c.emit1("Abs", {c.emit1("Sign", {c.emit1("Shrink", {c.x(0)}, kink)})});
  return times(c, mask);
}
Status no_gradient(GradContext&) { return Status::ok(); }

}  // namespace

void register_math_unary_gradients(GradRegistry& r) {
  r.add("Sin", sin_grad);
  r.add("Cos", cos_grad);
  r.add("Tan", tan_grad);
  r.add("Sinh", sinh_grad);
  r.add("Cosh", cosh_grad);
  r.add("Asin", asin_grad);
  r.add("Acos", acos_grad);
  r.add("Atan", atan_grad);
  r.add("Asinh", asinh_grad);
  r.add("Acosh", acosh_grad);
  r.add("Atanh", atanh_grad);
  r.add("Erf", erf_grad);
  r.add("Shrink", shrink_grad);
  for (const char* op : {"Floor", "Ceil", "Round", "Sign", "Hardmax", "IsNaN", "IsInf"}) r.add(op, no_gradient);
}

}  // namespace pock
