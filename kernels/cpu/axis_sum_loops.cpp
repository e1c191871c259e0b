// The cpu backend's loops for the gradient sums and reductions of axis_sum.hpp: vectorized row
// sums and row accumulation, of x itself and (for ReduceSumSquare, ReduceL2, ReduceL1) of x^2
// and |x|.
#include <cmath>

#include "kernels/cpu/axis_sum.hpp"
#include "kernels/cpu/simd.hpp"

namespace pock::cpu {
namespace {

POCK_SIMD_CLONES float row_sum(const float* x, int64_t n) {
  float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
  for (int64_t i = 0; i < n; ++i) sum += x[i];
  return sum;
}

POCK_SIMD_CLONES void accumulate(const float* x, float* y, int64_t n) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) y[i] += x[i];
}

POCK_SIMD_CLONES float row_square_sum(const float* x, int64_t n) {
  float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
  for (int64_t i = 0; i < n; ++i) sum += x[i] * x[i];
  return sum;
}

POCK_SIMD_CLONES void accumulate_squares(const float* x, float* y, int64_t n) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) y[i] += x[i] * x[i];
}

POCK_SIMD_CLONES float row_abs_sum(const float* x, int64_t n) {
  float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
  for (int64_t i = 0; i < n; ++i) sum += std::fabs(x[i]);
  return sum;
}

POCK_SIMD_CLONES void accumulate_abs(const float* x, float* y, int64_t n) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) y[i] += std::fabs(x[i]);
}

}  // namespace

const AxisSumLoops& cpu_axis_sum_loops() {
  static const AxisSumLoops loops{row_sum, accumulate};
  return loops;
}

const AxisSumLoops& cpu_axis_square_sum_loops() {
  static const AxisSumLoops loops{row_square_sum, accumulate_squares};
  return loops;
}

const AxisSumLoops& cpu_axis_abs_sum_loops() {
  static const AxisSumLoops loops{row_abs_sum, accumulate_abs};
  return loops;
}

}  // namespace pock::cpu
