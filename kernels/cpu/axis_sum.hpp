// Gradient sums over broadcast axes: the input seen as x [outer, mid, inner] and
//   y[m] = sum over o, i of x[o, m, i]   for m < kept (kept <= mid)
// covers what backward passes reduce: SumToShape back to a bias row ([N, F] -> [F]), to a
// per-channel scale ([N, C, H, W] -> [1, C, 1, 1]), to a scalar, to leading dims; and
// Conv2dGradBias (dy [N, O, H, W] -> db, only the first `channels` output channels).
// The plan is read here once; the loops come from the backend (cpu or neon) as AxisSumLoops.
#pragma once
#include <cstdint>

#include "kernels/cpu/thread_pool.hpp"
#include "runtime/kernel.hpp"

namespace pock::cpu {

struct AxisSum {
  int64_t outer = 1, mid = 1, inner = 1, kept = 1;
};

// False when the op's shapes are not one of the patterns above (the op then runs elsewhere).
bool sum_to_shape_plan(const pock_op_desc& op, AxisSum* plan);
bool conv_grad_bias_plan(const pock_op_desc& op, AxisSum* plan);

struct AxisSumLoops {
  float (*row_sum)(const float* x, int64_t n);              // sum of x[0, n)
  void (*accumulate)(const float* x, float* y, int64_t n);  // y[i] += x[i]
};

// The cpu backend's vectorized loops (axis_sum_loops.cpp), shared by its SumToShape,
// Conv2dGradBias, ReduceSum and ReduceMean kernels.
const AxisSumLoops& cpu_axis_sum_loops();
// The same loops over x^2 and |x| (ReduceSumSquare and ReduceL2, ReduceL1).
const AxisSumLoops& cpu_axis_square_sum_loops();
const AxisSumLoops& cpu_axis_abs_sum_loops();

// Runs the plan: row sums when inner > 1 (one task per kept m), column sums otherwise (tasks own
// disjoint column ranges of y, so none writes what another does).
void run_axis_sum(const AxisSum& plan, const float* x, float* y, pthreadpool_t pool, const AxisSumLoops& loops);

// A kernel over one of the plans above (kPlan) with a backend's loops: the table entry of
// SumToShape and Conv2dGradBias in every backend that has them.
template <bool (*kPlan)(const pock_op_desc&, AxisSum*), const AxisSumLoops& (*kLoops)()>
Status axis_sum_kernel(const KernelCall& c) {
  AxisSum plan;
  if (!kPlan(*c.desc, &plan)) return c.error("shapes changed since the kernel was chosen");
  run_axis_sum(plan, c.in_data<float>(0), c.out_data<float>(0), thread_pool_for(c.desc->num_threads), kLoops());
  return Status::ok();
}

template <bool (*kPlan)(const pock_op_desc&, AxisSum*)>
bool axis_sum_accepts(const pock_op_desc& op) {
  AxisSum plan;
  return kPlan(op, &plan);
}

}  // namespace pock::cpu
