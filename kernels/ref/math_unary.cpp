// Reference kernels of the math_unary family (f32 in; IsNaN / IsInf write bool).
#include <cmath>

#include "kernels/params/math_unary.hpp"
#include "kernels/ref/ref_util.hpp"

namespace pock {
namespace {

template <typename F>
Status unary(const KernelCall& c) {
  const float* x = c.in_data<float>(0);
  float* y = c.out_data<float>(0);
  for (int64_t i = 0, n = numel(c.out(0)); i < n; ++i) y[i] = F()(x[i]);
  return Status::ok();
}

Status shrink(const KernelCall& c, const params::ShrinkParams& p) {
  const float* x = c.in_data<float>(0);
  float* y = c.out_data<float>(0);
  const float lambd = static_cast<float>(p.lambd), bias = static_cast<float>(p.bias);
  for (int64_t i = 0, n = numel(c.out(0)); i < n; ++i) y[i] = math_unary::shrink(x[i], lambd, bias);
  return Status::ok();
}

Status is_nan(const KernelCall& c) {
  const float* x = c.in_data<float>(0);
  bool* y = c.out_data<bool>(0);
  for (int64_t i = 0, n = numel(c.out(0)); i < n; ++i) y[i] = std::isnan(x[i]);
  return Status::ok();
}

Status is_inf(const KernelCall& c, const params::IsInfParams& p) {
  const float* x = c.in_data<float>(0);
  bool* y = c.out_data<bool>(0);
  for (int64_t i = 0, n = numel(c.out(0)); i < n; ++i) {
    y[i] = std::isinf(x[i]) && (x[i] > 0 ? p.positive : p.negative);
  }
  return Status::ok();
}

// One-hot of the first maximum of each line along the axis, as numpy.argmax picks it (ONNX's
// reference): a NaN counts as the maximum.
Status hardmax(const KernelCall& c, const params::HardmaxParams& p) {
  const ref::AxisLines l = ref::lines_along(c.in(0), p.axis);
  const float* x = c.in_data<float>(0);
  float* y = c.out_data<float>(0);
  for (int64_t o = 0; o < l.outer; ++o) {
    for (int64_t i = 0; i < l.inner; ++i) {
      const int64_t base = o * l.n * l.inner + i;
      const int64_t best = ref::extremum_index<true>(x + base, l.n, l.inner, false);
      for (int64_t k = 0; k < l.n; ++k) y[base + k * l.inner] = k == best ? 1.0f : 0.0f;
    }
  }
  return Status::ok();
}

}  // namespace

void register_ref_math_unary(KernelTable& t) {
#define POCK_MATH_UNARY_REF(Op) t.add({#Op, DType::kF32, unary<math_unary::Op>});
  POCK_MATH_UNARY_FUNCTIONS(POCK_MATH_UNARY_REF)
#undef POCK_MATH_UNARY_REF
  t.add(typed_kernel<params::ShrinkParams, shrink>("Shrink", DType::kF32));
  t.add({"IsNaN", DType::kF32, is_nan});
  t.add(typed_kernel<params::IsInfParams, is_inf>("IsInf", DType::kF32));
  t.add(typed_kernel<params::HardmaxParams, hardmax>("Hardmax", DType::kF32));
}

}  // namespace pock
