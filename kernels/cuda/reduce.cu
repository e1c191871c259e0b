// The cuda reduce family: ReduceSum, ReduceMean, ReduceMax over any set of axes (f32, as ref).
// The split of the input into kept and reduced dims is planned at prepare (reduce_logic.hpp);
// reduce_launch.cuh picks a warp or block per output, or a warp across outputs.
#include "kernels/cuda/cuda_families.hpp"
#include "kernels/cuda/kernel_launch.cuh"
#include "kernels/cuda/planned_kernel.hpp"
#include "kernels/cuda/reduce_launch.cuh"
#include "kernels/params/reduce.hpp"

namespace pock::cuda {
namespace {

Status plan_reduce(const pock_op_desc& op, const params::ReduceParams& p, ReducePlan* plan) {
  *plan = reduce_plan(op.inputs[0], p.reduced);
  return reserve_workspace(reduce_workspace_bytes(*plan));
}

template <bool kMean>
Status reduce_sum(const KernelCall& c, const params::ReduceParams&, const ReducePlan& plan) {
  const SumReducer r{c.in_data<float>(0), c.out_data<float>(0), kMean ? static_cast<float>(plan.length) : 1.0f};
  return launched(c, launch_reduce(plan, r, static_cast<float*>(workspace()), current_stream()));
}

Status reduce_max(const KernelCall& c, const params::ReduceParams&, const ReducePlan& plan) {
  const MaxReducer r{c.in_data<float>(0), c.out_data<float>(0)};
  return launched(c, launch_reduce(plan, r, static_cast<float*>(workspace()), current_stream()));
}

}  // namespace

void register_reduce(KernelTable& t) {
  t.add(planned_kernel<params::ReduceParams, ReducePlan, plan_reduce, reduce_sum<false>>("ReduceSum", DType::kF32));
  t.add(planned_kernel<params::ReduceParams, ReducePlan, plan_reduce, reduce_sum<true>>("ReduceMean", DType::kF32));
  t.add(planned_kernel<params::ReduceParams, ReducePlan, plan_reduce, reduce_max>("ReduceMax", DType::kF32));
}

}  // namespace pock::cuda
