// cpu kernels of the math_unary family. Each loop runs the function of kernels/params/math_unary.hpp
// (so cpu and ref agree by construction) under `#pragma omp simd`, split over the thread pool for
// large tensors. Floor, Ceil, Sign, Shrink, IsNaN and IsInf vectorize as written; Round and Erf
// use the branch-free forms below, because nearbyint and erf do not vectorize. The trigonometric
// and hyperbolic functions call libm per element (no vector libm is assumed): rare in models, and
// exact to libm's ulp.
#include <cmath>
#include <cstddef>

#include "kernels/cpu/cpu_families.hpp"
#include "kernels/cpu/cpu_util.hpp"
#include "kernels/cpu/simd.hpp"
#include "kernels/cpu/thread_pool.hpp"
#include "kernels/params/math_unary.hpp"

namespace pock::cpu {
namespace {

// Below this many elements a loop is not worth handing to the pool.
constexpr size_t kMinParallelElements = size_t{1} << 15;

// Half to even by the 1.5 * 2^23 trick on |x|: from 2^23 up every float is an integer already,
// and NaN fails the comparison and passes through. copysign keeps -0 for -0.4, as numpy does.
struct VectorRound {
  POCK_SIMD_INLINE float operator()(float v) const {
    const float a = std::fabs(v);
    const float r = (a + 8388608.0f) - 8388608.0f;
    return a < 8388608.0f ? std::copysign(r, v) : v;
  }
};
struct VectorErf {
  POCK_SIMD_INLINE float operator()(float v) const { return simd::erf(v); }
};

template <typename F>
struct Vectorized { using type = F; };
template <> struct Vectorized<math_unary::Round> { using type = VectorRound; };
template <> struct Vectorized<math_unary::Erf> { using type = VectorErf; };

template <typename F>
POCK_SIMD_CLONES void unary_loop(const float* x, float* y, int64_t n) {
  const typename Vectorized<F>::type f;
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) y[i] = f(x[i]);
}

POCK_SIMD_CLONES void shrink_loop(const float* x, float* y, int64_t n, float lambd, float bias) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) y[i] = math_unary::shrink(x[i], lambd, bias);
}

// bool outputs are one byte of 0 or 1.
POCK_SIMD_CLONES void is_inf_loop(const float* x, uint8_t* y, int64_t n, bool negative, bool positive) {
  const float inf = HUGE_VALF;
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) y[i] = static_cast<uint8_t>((positive && x[i] == inf) || (negative && x[i] == -inf));
}

POCK_SIMD_CLONES void is_nan_loop(const float* x, uint8_t* y, int64_t n) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) y[i] = static_cast<uint8_t>(x[i] != x[i]);
}

// Runs body(begin, end) over the output's elements, on the pool when the tensor is large.
template <typename Body>
void split(const KernelCall& c, const Body& body) {
  const size_t n = static_cast<size_t>(numel(c.out(0)));
  pthreadpool_t pool = n >= kMinParallelElements ? thread_pool_for(c.desc->num_threads) : nullptr;
  parallel_for(pool, n, balanced_tile(pool, n, kMinParallelElements / 4), [&](size_t begin, size_t end) {
    body(static_cast<int64_t>(begin), static_cast<int64_t>(end - begin));
  });
}

template <typename F>
Status unary(const KernelCall& c) {
  const float* x = c.in_data<float>(0);
  float* y = c.out_data<float>(0);
  split(c, [&](int64_t begin, int64_t count) { unary_loop<F>(x + begin, y + begin, count); });
  return Status::ok();
}

Status shrink(const KernelCall& c, const params::ShrinkParams& p) {
  const float* x = c.in_data<float>(0);
  float* y = c.out_data<float>(0);
  const float lambd = static_cast<float>(p.lambd), bias = static_cast<float>(p.bias);
  split(c, [&](int64_t begin, int64_t count) { shrink_loop(x + begin, y + begin, count, lambd, bias); });
  return Status::ok();
}

Status is_nan(const KernelCall& c) {
  const float* x = c.in_data<float>(0);
  uint8_t* y = c.out_data<uint8_t>(0);
  split(c, [&](int64_t begin, int64_t count) { is_nan_loop(x + begin, y + begin, count); });
  return Status::ok();
}

Status is_inf(const KernelCall& c, const params::IsInfParams& p) {
  const float* x = c.in_data<float>(0);
  uint8_t* y = c.out_data<uint8_t>(0);
  split(c, [&](int64_t begin, int64_t count) { is_inf_loop(x + begin, y + begin, count, p.negative, p.positive); });
  return Status::ok();
}

bool same_size(const pock_op_desc& op) {
  return op.num_inputs == 1 && op.num_outputs == 1 && is_f32(op.inputs[0]) && numel(op.inputs[0]) == numel(op.outputs[0]);
}

}  // namespace

void register_math_unary(KernelTable& t) {
#define POCK_MATH_UNARY_CPU(Op) t.add(f32_kernel(#Op, unary<math_unary::Op>, same_size));
  POCK_MATH_UNARY_FUNCTIONS(POCK_MATH_UNARY_CPU)
#undef POCK_MATH_UNARY_CPU
  t.add(typed_kernel<params::ShrinkParams, shrink>("Shrink", DType::kF32, kCpuScore, same_size));
  t.add(f32_kernel("IsNaN", is_nan, same_size));
  t.add(typed_kernel<params::IsInfParams, is_inf>("IsInf", DType::kF32, kCpuScore, same_size));
}

}  // namespace pock::cpu
