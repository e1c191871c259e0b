// ReduceSum, ReduceMean and the reductions that are sums at heart (ReduceSumSquare, ReduceL1,
// ReduceL2, ReduceLogSum) on the cpu backend. After dropping extent-1 dims the reduced axes must
// form at most a leading and a trailing block around one kept block — x seen as
// [outer, kept, inner] — which is axis_sum.hpp's plan and covers per-channel sums of [N, C, H, W]
// over (0, 2, 3) (frozen-BatchNorm gradients), last-axis and leading-axis sums, and full sums. A
// reduced axis between two kept ones (e.g. (1,) of [N, C, H]: kept N and H) is another pattern
// and runs on ref. keepdims does not change the layout of y, so it needs nothing here.
#include <cmath>

#include "kernels/cpu/axis_sum.hpp"
#include "kernels/cpu/cpu_families.hpp"
#include "kernels/cpu/cpu_util.hpp"
#include "kernels/cpu/simd.hpp"
#include "kernels/params/reduce.hpp"

namespace pock::cpu {
namespace {

// The plan for x and the `axes` attribute (empty = all), or false for other patterns.
bool reduce_plan(const pock_op_desc& op, AxisSum* plan) {
  if (op.num_inputs != 1 || op.num_outputs != 1) return false;
  const pock_tensor_desc &x = op.inputs[0], &y = op.outputs[0];
  if (!is_f32(x) || !is_f32(y) || x.rank < 0 || x.rank > POCK_TENSOR_MAX_RANK) return false;
  params::ReduceParams p;  // the reduce family's shared parser
  if (!params::parse(op, &p).is_ok()) return false;
  const bool* reduced = p.reduced;
  // The kept dims that matter (extent > 1) must be one block: [first, last].
  int first = -1, last = -1;
  for (int d = 0; d < x.rank; ++d) {
    if (reduced[d] || x.dims[d] == 1) continue;
    if (first < 0) first = d;
    last = d;
  }
  for (int d = first; first >= 0 && d <= last; ++d) {
    if (reduced[d] && x.dims[d] != 1) return false;
  }
  if (first < 0) {  // everything of extent > 1 reduced: one contiguous row
    plan->outer = 1;
    plan->mid = 1;
    plan->inner = dims_product(x, 0, x.rank);
  } else {
    plan->outer = dims_product(x, 0, first);
    plan->mid = dims_product(x, first, last + 1);
    plan->inner = dims_product(x, last + 1, x.rank);
  }
  plan->kept = plan->mid;
  return dims_product(y, 0, y.rank) == plan->kept;
}

bool reduce_accepts(const pock_op_desc& op) {
  AxisSum plan;
  return reduce_plan(op, &plan);
}

POCK_SIMD_CLONES void scale(float s, float* y, int64_t n) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) y[i] *= s;
}

void apply_sqrt(float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = std::sqrt(y[i]);
}

void apply_log(float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = std::log(y[i]);
}

// What follows the sum: nothing, the mean's 1/n, or the sqrt / log of ReduceL2 / ReduceLogSum.
enum class Finish { kNone, kMean, kSqrt, kLog };

template <const AxisSumLoops& (*kLoops)(), Finish kFinish>
Status reduce_kernel(const KernelCall& c) {
  AxisSum plan;
  if (!reduce_plan(*c.desc, &plan)) return c.error("shapes changed since the kernel was chosen");
  float* y = c.out_data<float>(0);
  run_axis_sum(plan, c.in_data<float>(0), y, thread_pool_for(c.desc->num_threads), kLoops());
  // The schema rejects a mean over zero elements, so the count is at least 1 here.
  if (kFinish == Finish::kMean) scale(static_cast<float>(1.0 / static_cast<double>(plan.outer * plan.inner)), y, plan.kept);
  if (kFinish == Finish::kSqrt) apply_sqrt(y, plan.kept);
  if (kFinish == Finish::kLog) apply_log(y, plan.kept);
  return Status::ok();
}

KernelDef def(const char* op, KernelFn run) {
  KernelDef d{op, DType::kF32, run, kCpuScore};
  d.accepts = reduce_accepts;
  return d;
}

}  // namespace

void register_reduce(KernelTable& t) {
  t.add(def("ReduceSum", reduce_kernel<cpu_axis_sum_loops, Finish::kNone>));
  t.add(def("ReduceMean", reduce_kernel<cpu_axis_sum_loops, Finish::kMean>));
  t.add(def("ReduceSumSquare", reduce_kernel<cpu_axis_square_sum_loops, Finish::kNone>));
  t.add(def("ReduceL1", reduce_kernel<cpu_axis_abs_sum_loops, Finish::kNone>));
  t.add(def("ReduceL2", reduce_kernel<cpu_axis_square_sum_loops, Finish::kSqrt>));
  t.add(def("ReduceLogSum", reduce_kernel<cpu_axis_sum_loops, Finish::kLog>));
}

}  // namespace pock::cpu
