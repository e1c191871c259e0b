// Gradient rules of the elementwise family. Broadcast inputs get their gradient summed back to
// their own shape (GradContext::sum_to_shape); activations use the fused (dy, x) -> dx ops of the
// elementwise_grad family, and Relu / Relu6 / Clip a 1-byte mask (activation_mask family).
#include "compiler/autodiff/grad_rule.hpp"

namespace pock {
namespace {

Shape shape_of(GradContext& c, size_t input) { return c.desc(c.x(input)).shape; }  // a copy: emits grow the graph

// Sets input i's gradient from a full-shape (broadcast) gradient.
void set_reduced(GradContext& c, size_t i, TensorId full) {
  if (c.needs(i)) c.set_dx(i, c.sum_to_shape(full, shape_of(c, i)));
}

Status add_grad(GradContext& c) {
  set_reduced(c, 0, c.dy(0));
  set_reduced(c, 1, c.dy(0));
  return Status::ok();
}

Status sub_grad(GradContext& c) {
  set_reduced(c, 0, c.dy(0));
  if (c.needs(1)) set_reduced(c, 1, c.emit1("Neg", {c.dy(0)}));
  return Status::ok();
}

Status mul_grad(GradContext& c) {
  if (c.needs(0)) set_reduced(c, 0, c.emit1("Mul", {c.dy(0), c.x(1)}));
  if (c.needs(1)) set_reduced(c, 1, c.emit1("Mul", {c.dy(0), c.x(0)}));
  return Status::ok();
}

// y = a / b: da = dy / b, db = -dy * y / b.
Status div_grad(GradContext& c) {
  if (c.needs(0)) set_reduced(c, 0, c.emit1("Div", {c.dy(0), c.x(1)}));
  if (c.needs(1)) {
    const TensorId dy_y = c.emit1("Mul", {c.dy(0), c.y(0)});
    set_reduced(c, 1, c.emit1("Neg", {c.emit1("Div", {dy_y, c.x(1)})}));
  }
  return Status::ok();
}

// Pow, Maximum, Minimum: one op gives both full-shape gradients.
template <const char* kOp>
Status paired_grad(GradContext& c) {
  const std::vector<TensorId> d = c.emit(kOp, {c.dy(0), c.x(0), c.x(1)});
  if (d.size() != 2) return c.status();
  set_reduced(c, 0, d[0]);
  set_reduced(c, 1, d[1]);
  return Status::ok();
}
constexpr char kPowGrad[] = "PowGrad";
constexpr char kMaximumGrad[] = "MaximumGrad";
constexpr char kMinimumGrad[] = "MinimumGrad";

// dx = kGradOp(dy, x) with the forward attributes (alpha, min/max, approximate).
template <const char* kGradOp>
Status from_input(GradContext& c) {
  c.set_dx(0, c.emit1(kGradOp, {c.dy(0), c.x(0)}, c.attrs()));
  return Status::ok();
}
// dx = kGradOp(dy, y): for functions whose derivative is cheapest from the output.
template <const char* kGradOp>
Status from_output(GradContext& c) {
  c.set_dx(0, c.emit1(kGradOp, {c.dy(0), c.y(0)}));
  return Status::ok();
}
constexpr char kLeakyReluGrad[] = "LeakyReluGrad";
constexpr char kGeluGrad[] = "GeluGrad";
constexpr char kSiluGrad[] = "SiluGrad";
constexpr char kHardSwishGrad[] = "HardSwishGrad";
constexpr char kHardSigmoidGrad[] = "HardSigmoidGrad";
constexpr char kAbsGrad[] = "AbsGrad";
constexpr char kSigmoidGrad[] = "SigmoidGrad";
constexpr char kTanhGrad[] = "TanhGrad";
constexpr char kEluGrad[] = "EluGrad";
constexpr char kSeluGrad[] = "SeluGrad";
constexpr char kCeluGrad[] = "CeluGrad";
constexpr char kSoftplusGrad[] = "SoftplusGrad";
constexpr char kSoftsignGrad[] = "SoftsignGrad";
constexpr char kMishGrad[] = "MishGrad";

// Relu, Relu6 and Clip: f' is 1 inside the linear range and 0 outside, so the backward needs one
// byte per element. Unless the backward reads the activation's output or input anyway, ClipMask
// records that byte in the forward pass, right after the activation, and MaskGrad applies it:
// the f32 tensors may then die in the forward pass (sparse backprop through frozen layers keeps
// nothing else of them). Where the backward keeps y or x alive anyway, or x is not an arena
// tensor, the (dy, v) op reads that instead. Relu and Relu6 take the mask from the output y, exactly:
//   x > 0 <=> y > 0,  0 < x < 6 <=> 0 < y < 6  (a NaN fails both sides)
// which leaves the pre-activation no reader but the activation, so that the fusion pass still
// folds it into a Conv2d / Linear. Clip's bounds are inclusive (PyTorch's clamp), which y cannot
// tell (every x <= min gives y = min): its mask reads x.
struct RangeActivation {
  const char* grad_op;  // the (dy, v) -> dx op, used when v stays alive for the backward anyway
  bool from_output;     // Relu, Relu6: exclusive bounds, exact from y
};

Attrs clip_bounds(const Attrs& forward) {
  Attrs a;
  for (const char* bound : {"min", "max"}) {
    if (forward.has(bound)) a.set(bound, forward.get_float(bound, 0.0));
  }
  a.set("inclusive", int64_t{1});
  return a;
}

Status range_activation_grad(GradContext& c, const RangeActivation& kind, Attrs mask_attrs) {
  const TensorId x = c.x(0), y = c.y(0);
  if (kind.from_output && c.kept_by_backward(y)) {
    c.set_dx(0, c.emit1(kind.grad_op, {c.dy(0), y}, c.attrs()));
  } else if (c.desc(x).kind != TensorKind::kActivation || c.kept_by_backward(x)) {
    // x is a weight or an input (never in the arena), or the backward keeps it anyway.
    c.set_dx(0, c.emit1(kind.grad_op, {c.dy(0), x}, c.attrs()));
  } else {
    const TensorId mask = c.emit_forward1("ClipMask", {kind.from_output ? y : x}, std::move(mask_attrs));
    c.set_dx(0, c.emit1("MaskGrad", {c.dy(0), mask}));
  }
  return c.status();
}

Status relu_grad(GradContext& c) {
  return range_activation_grad(c, {"ReluGrad", true}, Attrs{{"min", 0.0}});
}
Status relu6_grad(GradContext& c) {
  return range_activation_grad(c, {"Relu6Grad", true}, Attrs{{"min", 0.0}, {"max", 6.0}});
}
Status clip_grad(GradContext& c) {
  return range_activation_grad(c, {"ClipGrad", false}, clip_bounds(c.attrs()));
}

// ThresholdedRelu passes x where x > alpha (strictly), which a ClipMask with a strict lower
// bound records from x (y cannot tell x = 0 from a zeroed x when alpha < 0).
Status thresholded_relu_grad(GradContext& c) {
  return range_activation_grad(c, {"ThresholdedReluGrad", false}, Attrs{{"min", c.attrs().get_float("alpha", 1.0)}});
}

// PRelu: (dx, dslope) at x's shape from one op; dslope is summed back to the slope's shape.
Status prelu_grad(GradContext& c) {
  const std::vector<TensorId> d = c.emit("PReluGrad", {c.dy(0), c.x(0), c.x(1)});
  if (d.size() != 2) return c.status();
  if (c.needs(0)) c.set_dx(0, d[0]);
  set_reduced(c, 1, d[1]);
  return Status::ok();
}

Status scaled(GradContext& c, TensorId t, double alpha) {
  c.set_dx(0, c.emit1("ScaleShift", {t}, Attrs{{"alpha", alpha}}));
  return Status::ok();
}

Status neg_grad(GradContext& c) {
  c.set_dx(0, c.emit1("Neg", {c.dy(0)}));
  return Status::ok();
}
Status exp_grad(GradContext& c) {  // d exp(x) = exp(x) = y
  c.set_dx(0, c.emit1("Mul", {c.dy(0), c.y(0)}));
  return Status::ok();
}
Status log_grad(GradContext& c) {
  c.set_dx(0, c.emit1("Div", {c.dy(0), c.x(0)}));
  return Status::ok();
}
Status sqrt_grad(GradContext& c) {  // 1 / (2 sqrt(x)) = 0.5 / y
  return scaled(c, c.emit1("Div", {c.dy(0), c.y(0)}), 0.5);
}
Status rsqrt_grad(GradContext& c) {  // -0.5 x^(-3/2) = -0.5 y^3
  const TensorId y3 = c.emit1("Mul", {c.emit1("Square", {c.y(0)}), c.y(0)});
  return scaled(c, c.emit1("Mul", {c.dy(0), y3}), -0.5);
}
Status reciprocal_grad(GradContext& c) {  // -1 / x^2 = -y^2
  return scaled(c, c.emit1("Mul", {c.dy(0), c.emit1("Square", {c.y(0)})}), -1.0);
}
Status square_grad(GradContext& c) {
  return scaled(c, c.emit1("Mul", {c.dy(0), c.x(0)}), 2.0);
}
Status scale_shift_grad(GradContext& c) {
  return scaled(c, c.dy(0), c.attrs().get_float("alpha", 1.0));
}
Status identity_grad(GradContext& c) {
  c.set_dx(0, c.dy(0));
  return Status::ok();
}

// Where(cond, a, b): the gradient goes to the branch that was taken; cond has none.
Status where_grad(GradContext& c) {
  const TensorId zero = c.constant(0.0f, {});
  if (c.needs(1)) set_reduced(c, 1, c.emit1("Where", {c.x(0), c.dy(0), zero}));
  if (c.needs(2)) set_reduced(c, 2, c.emit1("Where", {c.x(0), zero, c.dy(0)}));
  return Status::ok();
}

// Between float dtypes the gradient casts back; from or to an integer dtype nothing flows.
Status cast_grad(GradContext& c) {
  const DType from = c.desc(c.x(0)).dtype;
  if (!is_float(from) || !is_float(c.desc(c.y(0)).dtype)) return Status::ok();
  c.set_dx(0, from == c.desc(c.dy(0)).dtype ? c.dy(0) : c.emit1("Cast", {c.dy(0)}, Attrs{{"to", std::string(dtype_name(from))}}));
  return Status::ok();
}

}  // namespace

void register_elementwise_gradients(GradRegistry& r) {
  r.add("Add", add_grad);
  r.add("Sub", sub_grad);
  r.add("Mul", mul_grad);
  r.add("Div", div_grad);
  r.add("Pow", paired_grad<kPowGrad>);
  r.add("Maximum", paired_grad<kMaximumGrad>);
  r.add("Minimum", paired_grad<kMinimumGrad>);
  r.add("Neg", neg_grad);
  r.add("Exp", exp_grad);
  r.add("Log", log_grad);
  r.add("Sqrt", sqrt_grad);
  r.add("Rsqrt", rsqrt_grad);
  r.add("Reciprocal", reciprocal_grad);
  r.add("Square", square_grad);
  r.add("Abs", from_input<kAbsGrad>);
  r.add("Relu", relu_grad);
  r.add("Relu6", relu6_grad);
  r.add("LeakyRelu", from_input<kLeakyReluGrad>);
  r.add("Clip", clip_grad);
  r.add("Gelu", from_input<kGeluGrad>);
  r.add("Silu", from_input<kSiluGrad>);
  r.add("HardSwish", from_input<kHardSwishGrad>);
  r.add("HardSigmoid", from_input<kHardSigmoidGrad>);
  r.add("Sigmoid", from_output<kSigmoidGrad>);
  r.add("Tanh", from_output<kTanhGrad>);
  r.add("Elu", from_input<kEluGrad>);
  r.add("Selu", from_input<kSeluGrad>);
  r.add("Celu", from_input<kCeluGrad>);
  r.add("Softplus", from_input<kSoftplusGrad>);
  r.add("Softsign", from_input<kSoftsignGrad>);
  r.add("ThresholdedRelu", thresholded_relu_grad);
  r.add("Mish", from_input<kMishGrad>);
  r.add("PRelu", prelu_grad);
  r.add("ScaleShift", scale_shift_grad);
  r.add("Identity", identity_grad);
  r.add("Where", where_grad);
  r.add("Cast", cast_grad);
}

}  // namespace pock
