// Gradient rules of the linalg family.
#include "compiler/autodiff/grad_rule.hpp"
#include "compiler/sparse/partial_channels.hpp"

namespace pock {
namespace {

// The forward's compute ("bf16": operands rounded to bf16) carries over to its backward GEMMs.
Attrs with_compute(const GradContext& c, Attrs attrs = {}) {
  if (const AttrValue* compute = c.attrs().find("compute")) attrs.set("compute", *compute);
  return attrs;
}

Attrs transposes(const GradContext& c, bool a, bool b) {
  return with_compute(c, Attrs{{"transpose_a", static_cast<int64_t>(a)}, {"transpose_b", static_cast<int64_t>(b)}});
}

// The leading `rows` entries of `t` along `axis`; `t` itself when rows < 0 (every row trains).
TensorId leading(GradContext& c, TensorId t, int64_t rows, int64_t axis) {
  return rows < 0 ? t : c.emit1("Slice", {t}, leading_slice_attrs(rows, axis));
}

// Partial-channel updates of a 2-D operand: the rows of its gradient that train come from the
// leading entries of one factor of the gradient product, so that factor is sliced before the
// GEMM. -1 (no slice) for a full update, or for a batched operand, whose leading dim is not a
// matrix row (the driver slices that gradient afterwards).
int64_t matrix_rows(GradContext& c, size_t i) {
  return c.desc(c.x(i)).shape.size() == 2 ? c.leading_rows(i) : -1;
}

// y = op(a) op(b), op = optional transpose of the last two dims. With G = dy:
//   d op(a) = G op(b)ᵀ,   d op(b) = op(a)ᵀ G,
// and a transposed operand takes the transpose of that. Broadcast batch dims are summed back.
Status matmul_grad(GradContext& c) {
  const bool ta = c.attrs().get_int("transpose_a", 0) != 0;
  const bool tb = c.attrs().get_int("transpose_b", 0) != 0;
  const TensorId a = c.x(0), b = c.x(1), g = c.dy(0);
  if (c.needs(0)) {
    const int64_t rows = matrix_rows(c, 0);
    const Shape shape = rows > 0 ? trained_shape(c.desc(a)) : c.desc(a).shape;
    // a's stored rows are G's rows (ta = 0) or op(b)'s rows (ta = 1).
    const TensorId da = ta ? c.emit1("MatMul", {leading(c, b, rows, tb ? -1 : -2), g}, transposes(c, tb, true))  // op(b) Gᵀ
                           : c.emit1("MatMul", {leading(c, g, rows, -2), b}, transposes(c, false, !tb));          // G op(b)ᵀ
    c.set_dx(0, c.sum_to_shape(da, shape));
  }
  if (c.needs(1)) {
    const int64_t rows = matrix_rows(c, 1);
    const Shape shape = rows > 0 ? trained_shape(c.desc(b)) : c.desc(b).shape;
    // b's stored rows are G's columns (tb = 1, a [N, K] weight) or op(a)'s columns (tb = 0).
    const TensorId db = tb ? c.emit1("MatMul", {leading(c, g, rows, -1), a}, transposes(c, true, ta))       // Gᵀ op(a)
                           : c.emit1("MatMul", {leading(c, a, rows, ta ? -2 : -1), g}, transposes(c, !ta, false)); // op(a)ᵀ G
    c.set_dx(1, c.sum_to_shape(db, shape));
  }
  return Status::ok();
}

// y = x wᵀ + b over every leading dim of x.
Status linear_grad(GradContext& c) {
  POCK_RETURN_IF_ERROR(refuse_fused_activation(c));
  if (c.needs(0)) c.set_dx(0, c.emit1("LinearInputGrad", {c.dy(0), c.x(1)}, with_compute(c)));
  // Partial-channel update of w [N, K]: rows n < k need only dy's leading k output features.
  if (c.needs(1)) c.set_dx(1, c.emit1("LinearWeightGrad", {leading(c, c.dy(0), c.leading_rows(1), -1), c.x(0)}, with_compute(c)));
  if (c.needs(2)) {
    const Shape shape = c.desc(c.x(2)).shape;
    c.set_dx(2, c.sum_to_shape(c.dy(0), shape));
  }
  return Status::ok();
}

// The int8 weight transposed ([K, N]), a constant made once per weight, so that the input
// gradient reads contiguous int8 rows as the forward does.
TensorId transposed_int8(GradContext& c, TensorId weight) {
  const TensorDesc w = c.desc(weight);  // a copy: adding tensors moves the table
  const std::string name = w.name + ".T";
  if (const TensorId found = c.graph().find(name); found != kNoTensor) return found;
  const int64_t n = w.shape[0], k = w.shape[1];
  std::vector<uint8_t> t(static_cast<size_t>(n * k));
  for (int64_t j = 0; j < n; ++j) {
    for (int64_t p = 0; p < k; ++p) t[static_cast<size_t>(p * n + j)] = (*w.data)[static_cast<size_t>(j * k + p)];
  }
  return c.graph().add_constant(name, DType::kI8, {k, n}, std::move(t));
}

// LinearInt8: the int8 weight and its scales are frozen constants; dx passes straight through
// the rounding of x's rows (which has no useful gradient), and the bias trains as Linear's.
Status linear_int8_grad(GradContext& c) {
  if (c.needs(1) || c.needs(2)) {
    return Status(Code::kInvalidArgument, "LinearInt8 '" + c.node().name + "': its int8 weight and scales are frozen");
  }
  if (c.needs(0)) {
    if (!c.desc(c.x(1)).data) return Status(Code::kUnsupportedOp, "LinearInt8 '" + c.node().name + "': the int8 weight is not a constant");
    const TensorId wt = transposed_int8(c, c.x(1));
    c.set_dx(0, c.emit1("LinearInt8InputGrad", {c.dy(0), wt, c.x(2)}));
  }
  if (c.needs(3)) {
    const Shape shape = c.desc(c.x(3)).shape;
    c.set_dx(3, c.sum_to_shape(c.dy(0), shape));
  }
  return Status::ok();
}

}  // namespace

void register_linalg_gradients(GradRegistry& r) {
  r.add("LinearInt8", linear_int8_grad);
  r.add("MatMul", matmul_grad);
  r.add("Linear", linear_grad);
}

}  // namespace pock
