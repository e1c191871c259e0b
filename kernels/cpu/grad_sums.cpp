// SumToShape and Conv2dGradBias on the cpu backend: the gradient sums of axis_sum.hpp with
// vectorized row sums and row accumulation. SumToShape patterns axis_sum does not cover (a
// summed axis between two kept ones) run on ref.
#include "kernels/cpu/axis_sum.hpp"
#include "kernels/cpu/cpu_families.hpp"
#include "kernels/cpu/cpu_util.hpp"
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

bool sum_to_shape_accepts(const pock_op_desc& op) {
  AxisSum plan;
  return sum_to_shape_plan(op, &plan);
}

bool bias_accepts(const pock_op_desc& op) {
  AxisSum plan;
  return conv_grad_bias_plan(op, &plan);
}

template <bool (*kPlan)(const pock_op_desc&, AxisSum*)>
Status axis_sum_kernel(const KernelCall& c) {
  AxisSum plan;
  if (!kPlan(*c.desc, &plan)) return c.error("shapes changed since the kernel was chosen");
  run_axis_sum(plan, c.in_data<float>(0), c.out_data<float>(0), thread_pool_for(c.desc->num_threads),
               cpu_axis_sum_loops());
  return Status::ok();
}

}  // namespace

const AxisSumLoops& cpu_axis_sum_loops() {
  static const AxisSumLoops loops{row_sum, accumulate};
  return loops;
}

void register_grad_sums(KernelTable& t) {
  t.add(f32_kernel("SumToShape", axis_sum_kernel<sum_to_shape_plan>, sum_to_shape_accepts));
  t.add(f32_kernel("Conv2dGradBias", axis_sum_kernel<conv_grad_bias_plan>, bias_accepts));
}

}  // namespace pock::cpu
