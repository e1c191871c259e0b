// SumToShape and Conv2dGradBias with NEON: the plans and traversal of kernels/cpu/axis_sum.hpp,
// with four-lane row sums (two accumulators, so that consecutive adds do not wait on each other)
// and row accumulation.
#include <arm_neon.h>

#include "kernels/cpu/axis_sum.hpp"
#include "kernels/cpu/thread_pool.hpp"
#include "kernels/neon/neon_families.hpp"
#include "kernels/neon/neon_util.hpp"

namespace pock::neon {
namespace {

float row_sum(const float* x, int64_t n) {
  float32x4_t a = vdupq_n_f32(0.0f), b = vdupq_n_f32(0.0f);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    a = vaddq_f32(a, vld1q_f32(x + i));
    b = vaddq_f32(b, vld1q_f32(x + i + 4));
  }
  for (; i + 4 <= n; i += 4) a = vaddq_f32(a, vld1q_f32(x + i));
  float sum = vaddvq_f32(vaddq_f32(a, b));
  for (; i < n; ++i) sum += x[i];
  return sum;
}

void accumulate(const float* x, float* y, int64_t n) {
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) vst1q_f32(y + i, vaddq_f32(vld1q_f32(y + i), vld1q_f32(x + i)));
  for (; i < n; ++i) y[i] += x[i];
}

const cpu::AxisSumLoops kLoops{row_sum, accumulate};

bool sum_to_shape_accepts(const pock_op_desc& op) {
  cpu::AxisSum plan;
  return cpu::sum_to_shape_plan(op, &plan);
}

bool bias_accepts(const pock_op_desc& op) {
  cpu::AxisSum plan;
  return cpu::conv_grad_bias_plan(op, &plan);
}

template <bool (*kPlan)(const pock_op_desc&, cpu::AxisSum*)>
Status axis_sum_kernel(const KernelCall& c) {
  cpu::AxisSum plan;
  if (!kPlan(*c.desc, &plan)) return c.error("shapes changed since the kernel was chosen");
  cpu::run_axis_sum(plan, c.in_data<float>(0), c.out_data<float>(0), cpu::thread_pool_for(c.desc->num_threads), kLoops);
  return Status::ok();
}

}  // namespace

void register_grad_sums(KernelTable& t) {
  t.add(def("SumToShape", axis_sum_kernel<cpu::sum_to_shape_plan>, sum_to_shape_accepts));
  t.add(def("Conv2dGradBias", axis_sum_kernel<cpu::conv_grad_bias_plan>, bias_accepts));
}

}  // namespace pock::neon
