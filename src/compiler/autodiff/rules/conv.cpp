// Gradient rules of the conv family. Each backward op takes the forward node's attributes as they
// are, plus the one shape it cannot infer from its own inputs.
#include "compiler/autodiff/grad_rule.hpp"

namespace pock {
namespace {

// The forward node's attributes with one more entry.
Attrs forward_attrs_with(const GradContext& ctx, const char* name, AttrValue value) {
  Attrs attrs = ctx.attrs();
  attrs.set(name, std::move(value));
  return attrs;
}

// Conv2d(x, w, b?): dx is the transposed convolution of dy with w, dw the correlation of x with
// dy, db the sum of dy per output channel.
Status conv2d(GradContext& ctx) {
  POCK_RETURN_IF_ERROR(refuse_fused_activation(ctx));
  const TensorId dy = ctx.dy(0);
  if (dy == kNoTensor) return Status::ok();
  if (ctx.needs(0)) {
    ctx.set_dx(0, ctx.emit1("Conv2dGradInput", {dy, ctx.x(1)},
                            forward_attrs_with(ctx, "input_shape", ctx.desc(ctx.x(0)).shape)));
  }
  // Partial-channel updates compute only the leading output channels' weight / bias gradients.
  if (ctx.needs(1)) {
    const Shape w = ctx.desc(ctx.x(1)).shape;  // a copy: emitting nodes grows the tensor table
    Attrs attrs = forward_attrs_with(ctx, "kernel", std::vector<int64_t>{w[2], w[3]});
    if (ctx.leading_rows(1) > 0) attrs.set("channels", ctx.leading_rows(1));
    ctx.set_dx(1, ctx.emit1("Conv2dGradWeight", {ctx.x(0), dy}, std::move(attrs)));
  }
  if (ctx.needs(2)) {
    Attrs attrs;
    if (ctx.leading_rows(2) > 0) attrs.set("channels", ctx.leading_rows(2));
    ctx.set_dx(2, ctx.emit1("Conv2dGradBias", {dy}, std::move(attrs)));
  }
  return ctx.status();
}

// ConvTranspose2d(x, w) is the adjoint of the Conv2d of y with w: dx is that Conv2d of dy, and dw
// the correlation Conv2dGradWeight computes with the roles of its operands swapped (dy in x's
// place, x in dy's), which gives [Cin, Cout/groups, kh, kw], w's own layout.
Status conv_transpose2d(GradContext& ctx) {
  const TensorId dy = ctx.dy(0);
  if (dy == kNoTensor) return Status::ok();
  Attrs window;
  for (const char* name : {"strides", "pads", "dilations", "groups"}) {
    if (const AttrValue* v = ctx.attrs().find(name)) window.set(name, *v);
  }
  if (ctx.needs(0)) ctx.set_dx(0, ctx.emit1("Conv2d", {dy, ctx.x(1)}, window));
  if (ctx.needs(1)) {
    const Shape w = ctx.desc(ctx.x(1)).shape;  // a copy: emitting nodes grows the tensor table
    window.set("kernel", std::vector<int64_t>{w[2], w[3]});
    ctx.set_dx(1, ctx.emit1("Conv2dGradWeight", {dy, ctx.x(0)}, std::move(window)));
  }
  return ctx.status();
}

Status max_pool2d(GradContext& ctx) {
  if (ctx.dy(0) == kNoTensor || !ctx.needs(0)) return Status::ok();
  ctx.set_dx(0, ctx.emit1("MaxPool2dGrad", {ctx.dy(0), ctx.x(0)}, ctx.attrs()));
  return ctx.status();
}

Status avg_pool2d(GradContext& ctx) {
  if (ctx.dy(0) == kNoTensor || !ctx.needs(0)) return Status::ok();
  ctx.set_dx(0,
             ctx.emit1("AvgPool2dGrad", {ctx.dy(0)}, forward_attrs_with(ctx, "input_shape", ctx.desc(ctx.x(0)).shape)));
  return ctx.status();
}

// GlobalAvgPool: every pixel of a plane receives its plane's dy / (H * W).
Status global_avg_pool(GradContext& ctx) {
  if (ctx.dy(0) == kNoTensor || !ctx.needs(0)) return Status::ok();
  const Shape x = ctx.desc(ctx.x(0)).shape;  // a copy: emitting nodes grows the tensor table
  const int64_t area = x[2] * x[3];
  const TensorId scaled =
      ctx.emit1("ScaleShift", {ctx.dy(0)}, {{"alpha", area > 0 ? 1.0 / static_cast<double>(area) : 0.0}});
  ctx.set_dx(0, ctx.emit1("Expand", {scaled}, {{"shape", x}}));
  return ctx.status();
}

}  // namespace

void register_conv_gradients(GradRegistry& r) {
  r.add("Conv2d", conv2d);
  r.add("ConvTranspose2d", conv_transpose2d);
  r.add("MaxPool2d", max_pool2d);
  r.add("AvgPool2d", avg_pool2d);
  r.add("GlobalAvgPool", global_avg_pool);
}

}  // namespace pock
