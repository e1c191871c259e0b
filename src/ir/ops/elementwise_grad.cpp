// Schemas of the elementwise_grad family: backward ops that autodiff emits for the elementwise,
// linalg and reduce families (see docs/ops.md). None of them has a gradient of its own.
#include <algorithm>

#include "ir/ops/schema_helpers.hpp"

namespace pock {
namespace {

Result<Shape> shape_attr(const InferContext& ctx, const char* name) {
  const AttrValue* v = ctx.attrs->find(name);
  if (!v) return ctx.error(std::string("attribute '") + name + "' is required");
  const auto* ints = std::get_if<std::vector<int64_t>>(v);
  const auto* one = std::get_if<int64_t>(v);
  if (!ints && !one) return ctx.error(std::string("attribute '") + name + "' must be a list of ints");
  Shape shape = ints ? *ints : Shape{*one};
  for (int64_t d : shape) {
    if (d < 0) return ctx.error(std::string("attribute '") + name + "' has a negative dimension: " + shape_str(shape));
  }
  if (static_cast<int>(shape.size()) > kMaxRank) return ctx.error(std::string("attribute '") + name + "' exceeds the maximum rank");
  return shape;
}

// (dy, x) or (dy, y) -> dx, all of one shape.
Status unary_grad(InferContext& ctx) {
  POCK_RETURN_IF_ERROR(schema::require_float(ctx, 0));
  POCK_RETURN_IF_ERROR(schema::require_same_dtype(ctx));
  if (ctx.in(0).shape != ctx.in(1).shape) {
    return ctx.shape_error("gradient " + shape_str(ctx.in(0).shape) + " and forward tensor " + shape_str(ctx.in(1).shape) +
                           " differ in shape");
  }
  return schema::same_as_first(ctx);
}

// (dy, a, b) -> (da, db) at dy's shape, before reduction to a's and b's shapes.
Status binary_grad(InferContext& ctx) {
  POCK_RETURN_IF_ERROR(schema::require_float(ctx, 0));
  POCK_RETURN_IF_ERROR(schema::require_same_dtype(ctx));
  auto s = broadcast_shapes(ctx.in(1).shape, ctx.in(2).shape);
  if (!s.is_ok()) return ctx.shape_error(s.status().message());
  if (s.value() != ctx.in(0).shape) {
    return ctx.shape_error("gradient " + shape_str(ctx.in(0).shape) + " is not the broadcast shape " + shape_str(s.value()));
  }
  ctx.outputs = {ctx.in(0), ctx.in(0)};
  return Status::ok();
}

Status sum_to_shape(InferContext& ctx) {
  POCK_RETURN_IF_ERROR(schema::require_float(ctx, 0));
  POCK_ASSIGN_OR_RETURN(Shape target, shape_attr(ctx, "shape"));
  auto b = broadcast_shapes(target, ctx.in(0).shape);
  if (!b.is_ok() || b.value() != ctx.in(0).shape) {
    return ctx.shape_error("cannot sum " + shape_str(ctx.in(0).shape) + " to " + shape_str(target) +
                           ": the target must broadcast to the input");
  }
  ctx.outputs = {TensorType{ctx.in(0).dtype, target}};
  return Status::ok();
}

// The reduced shape of `x` under the reduce family's (axes, keepdims) convention.
Result<Shape> reduced_shape(const InferContext& ctx, const Shape& x) {
  static const std::vector<int64_t> kAll;
  const std::vector<int64_t>& axes = ctx.attrs->get_ints("axes", kAll);
  const bool keepdims = ctx.attrs->get_int("keepdims", 1) != 0;
  std::vector<bool> reduced(x.size(), axes.empty());
  for (int64_t axis : axes) {
    auto a = normalize_axis(axis, static_cast<int>(x.size()));
    if (!a.is_ok()) return ctx.error(a.status().message());
    reduced[static_cast<size_t>(a.value())] = true;
  }
  Shape out;
  for (size_t d = 0; d < x.size(); ++d) {
    if (!reduced[d]) out.push_back(x[d]);
    else if (keepdims) out.push_back(1);
  }
  return out;
}

Status reduce_sum_grad(InferContext& ctx) {
  POCK_RETURN_IF_ERROR(schema::require_float(ctx, 0));
  POCK_ASSIGN_OR_RETURN(Shape x, shape_attr(ctx, "shape"));
  POCK_ASSIGN_OR_RETURN(Shape reduced, reduced_shape(ctx, x));
  if (reduced != ctx.in(0).shape) {
    return ctx.shape_error("gradient " + shape_str(ctx.in(0).shape) + " does not match the reduced shape " + shape_str(reduced));
  }
  ctx.outputs = {TensorType{ctx.in(0).dtype, x}};
  return Status::ok();
}

// (dy, x[, m]): dy, and m when present, have x's shape reduced by the forward's axes/keepdims.
Status reduce_input_grad(InferContext& ctx) {
  POCK_RETURN_IF_ERROR(schema::require_float(ctx, 0));
  POCK_RETURN_IF_ERROR(schema::require_same_dtype(ctx));
  POCK_ASSIGN_OR_RETURN(Shape reduced, reduced_shape(ctx, ctx.in(1).shape));
  if (reduced != ctx.in(0).shape) {
    return ctx.shape_error("gradient " + shape_str(ctx.in(0).shape) + " must have the reduced shape " + shape_str(reduced));
  }
  if (ctx.has_in(2) && reduced != ctx.in(2).shape) {
    return ctx.shape_error("extremum " + shape_str(ctx.in(2).shape) + " must have the reduced shape " + shape_str(reduced));
  }
  ctx.outputs = {ctx.in(1)};
  return Status::ok();
}

// dy [..., N] and w [N, K] -> dx [..., K].
Status linear_input_grad(InferContext& ctx) {
  POCK_RETURN_IF_ERROR(schema::require_float(ctx, 0));
  POCK_ASSIGN_OR_RETURN(const DType dtype, schema::gemm_output_dtype(ctx, 2));
  const Shape& dy = ctx.in(0).shape;
  const Shape& w = ctx.in(1).shape;
  if (dy.empty() || w.size() != 2 || dy.back() != w[0]) {
    return ctx.shape_error("needs dy [..., N] and w [N, K], got " + shape_str(dy) + " and " + shape_str(w));
  }
  Shape out = dy;
  out.back() = w[1];
  ctx.outputs = {TensorType{dtype, out}};
  return Status::ok();
}

// dy f32 [..., N], w_t i8 [K, N] (the int8 weight transposed), scale f32 [N] -> dx f32 [..., K].
Status linear_int8_input_grad(InferContext& ctx) {
  const Shape& dy = ctx.in(0).shape;
  const Shape& wt = ctx.in(1).shape;
  if (ctx.in(0).dtype != DType::kF32 || ctx.in(1).dtype != DType::kI8 || ctx.in(2).dtype != DType::kF32) {
    return ctx.error("needs dy f32, w_t i8 and scale f32");
  }
  if (dy.empty() || wt.size() != 2 || dy.back() != wt[1] || ctx.in(2).shape != Shape{wt[1]}) {
    return ctx.shape_error("needs dy [..., N], w_t [K, N] and scale [N], got " + shape_str(dy) + ", " + shape_str(wt) +
                           " and " + shape_str(ctx.in(2).shape));
  }
  Shape out = dy;
  out.back() = wt[0];
  ctx.outputs = {TensorType{DType::kF32, out}};
  return Status::ok();
}

// dy [..., N] and x [..., K] -> dw [N, K] (summed over the leading dimensions).
Status linear_weight_grad(InferContext& ctx) {
  POCK_RETURN_IF_ERROR(schema::require_float(ctx, 0));
  POCK_ASSIGN_OR_RETURN(const DType dtype, schema::gemm_output_dtype(ctx, 2));
  const Shape& dy = ctx.in(0).shape;
  const Shape& x = ctx.in(1).shape;
  if (dy.empty() || x.size() != dy.size() || !std::equal(dy.begin(), dy.end() - 1, x.begin())) {
    return ctx.shape_error("needs dy [..., N] and x [..., K] with equal leading dimensions, got " + shape_str(dy) +
                           " and " + shape_str(x));
  }
  ctx.outputs = {TensorType{dtype, Shape{dy.back(), x.back()}}};
  return Status::ok();
}

}  // namespace

void register_elementwise_grad_schemas(SchemaRegistry& r) {
  using schema::add;
  add(r, "SumToShape", 1, 1, 1, 1, sum_to_shape, "sums a broadcast gradient back to attribute 'shape'");
  add(r, "ReduceSumGrad", 1, 1, 1, 1, reduce_sum_grad,
      "broadcasts a reduced gradient back to 'shape' (axes, keepdims as the forward reduce), times 'scale'");
  add(r, "ReduceMaxGrad", 3, 3, 1, 1, reduce_input_grad,
      "(dy, x, m): dy to the elements of x equal to m (the max, or the min), split evenly among ties");
  add(r, "ReduceProdGrad", 2, 2, 1, 1, reduce_input_grad, "(dy, x): dy times the product of the group's other elements");
  // dx = dy * f'(x), at the same kinks as PyTorch.
  for (const char* op : {"ReluGrad", "Relu6Grad", "LeakyReluGrad", "ClipGrad", "GeluGrad", "SiluGrad",
                         "HardSwishGrad", "HardSigmoidGrad", "AbsGrad"}) {
    add(r, op, 2, 2, 1, 1, unary_grad, "(dy, x) -> dx");
  }
  for (const char* op : {"EluGrad", "SeluGrad", "CeluGrad", "SoftplusGrad", "SoftsignGrad", "ThresholdedReluGrad", "MishGrad"}) {
    add(r, op, 2, 2, 1, 1, unary_grad, "(dy, x) -> dx");
  }
  // Cheaper from the forward output: dx = dy * f'(y).
  for (const char* op : {"SigmoidGrad", "TanhGrad"}) add(r, op, 2, 2, 1, 1, unary_grad, "(dy, y) -> dx");
  add(r, "MaximumGrad", 3, 3, 2, 2, binary_grad, "(dy, a, b) -> (da, db) at dy's shape; ties split evenly");
  add(r, "MinimumGrad", 3, 3, 2, 2, binary_grad, "(dy, a, b) -> (da, db) at dy's shape; ties split evenly");
  add(r, "PReluGrad", 3, 3, 2, 2, binary_grad,
      "(dy, x, slope) -> (dy (x > 0 ? 1 : slope), dy (x > 0 ? 0 : x)) at dy's shape (x's: the slope broadcasts to x)");
  add(r, "PowGrad", 3, 3, 2, 2, binary_grad, "(dy, a, b) -> (dy b a^(b-1), dy a^b ln a) at dy's shape");
  add(r, "LinearInputGrad", 2, 2, 1, 1, linear_input_grad, "(dy [..., N], w [N, K]) -> dy w [..., K]; compute (f32 | bf16)");
  add(r, "LinearInt8InputGrad", 3, 3, 1, 1, linear_int8_input_grad,
      "(dy [..., N], w_t [K, N] i8, scale [N]) -> dx [..., K]: rows of dy * scale quantized to int8 as LinearInt8 "
      "quantizes x, int32 products with the transposed int8 weight");
  add(r, "LinearWeightGrad", 2, 2, 1, 1, linear_weight_grad, "(dy [..., N], x [..., K]) -> dyᵀ x [N, K]; compute (f32 | bf16)");
}

}  // namespace pock
