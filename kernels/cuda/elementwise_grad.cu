// The cuda elementwise_grad family, but for the Linear gradients (linear_grad, the backend's):
// the activation derivatives, the two-output Maximum/Minimum/Pow gradients, and the reduction
// gradients (ReduceSumGrad, ReduceMaxGrad, SumToShape). Logic: elementwise_grad_logic.hpp.
#include "kernels/cuda/cuda_families.hpp"
#include "kernels/cuda/elementwise_grad_logic.hpp"
#include "kernels/cuda/float_map.cuh"
#include "kernels/cuda/planned_kernel.hpp"
#include "kernels/cuda/reduce_launch.cuh"
#include "kernels/params/reduce.hpp"

namespace pock::cuda {
namespace {

template <typename Op>
Status unary_grad(const KernelCall& c, const params::ActivationParams& p, const StridedIndex<2>& index) {
  return run_float_map<Op, 2>(c, index, grad_args(p));
}

// a and b (inputs 1, 2) against dy's shape (output 0's).
Status plan_pair(const pock_op_desc& op, const NoParams&, StridedIndex<2>* index) {
  const pock_tensor_desc* ins[2] = {&op.inputs[1], &op.inputs[2]};
  *index = broadcast_index<2>(op.outputs[0], ins);
  return Status::ok();
}

template <typename Op>
Status pair_grad(const KernelCall& c, const NoParams&, const StridedIndex<2>& index) {
  const PairGradMap<Op> map{c.in_data<float>(0), c.in_data<float>(1), c.in_data<float>(2),
                            c.out_data<float>(0), c.out_data<float>(1), index};
  return launched(c, launch_map(numel(c.out(0)), current_stream(), map));
}

Status plan_sum_to_shape(const pock_op_desc& op, const NoParams&, ReducePlan* plan) {
  bool reduced[POCK_TENSOR_MAX_RANK] = {};
  sum_to_shape_dims(op.inputs[0], op.outputs[0], reduced);
  *plan = reduce_plan(op.inputs[0], reduced);
  return reserve_workspace(reduce_workspace_bytes(*plan));
}

Status sum_to_shape(const KernelCall& c, const NoParams&, const ReducePlan& plan) {
  const SumReducer r{c.in_data<float>(0), c.out_data<float>(0), 1.0f};
  return launched(c, launch_reduce(plan, r, static_cast<float*>(workspace()), current_stream()));
}

// dy's elements (reduced shape) broadcast over the full output.
Status plan_reduce_back(const pock_op_desc& op, const params::ReduceParams& p, StridedIndex<1>* index) {
  const pock_tensor_desc reduced = keepdims_view(p.reduced, op.outputs[0]);
  const pock_tensor_desc* ins[1] = {&reduced};
  *index = broadcast_index<1>(op.outputs[0], ins);
  return Status::ok();
}

Status reduce_sum_grad(const KernelCall& c, const params::ReduceParams& p, const StridedIndex<1>& index) {
  return run_float_map<ScaleOp, 1>(c, index, static_cast<float>(p.scale));
}

// Pass 1 counts each group's maxima into the workspace, pass 2 hands dy to them.
struct MaxGradPlan {
  ReducePlan groups;     // over x
  StridedIndex<1> back;  // x's element -> its group
  size_t ties_floats;    // the tie counts' share of the workspace, whole 16-byte units; partials follow
};

Status plan_max_grad(const pock_op_desc& op, const params::ReduceParams& p, MaxGradPlan* plan) {
  plan->groups = reduce_plan(op.inputs[1], p.reduced);
  const pock_tensor_desc reduced = keepdims_view(p.reduced, op.inputs[1]);
  const pock_tensor_desc* ins[1] = {&reduced};
  plan->back = broadcast_index<1>(op.inputs[1], ins);
  plan->ties_floats = (static_cast<size_t>(plan->groups.outputs) + 3) / 4 * 4;
  return reserve_workspace(plan->ties_floats * sizeof(float) + reduce_workspace_bytes(plan->groups));
}

Status reduce_max_grad(const KernelCall& c, const params::ReduceParams&, const MaxGradPlan& plan) {
  const float* dy = c.in_data<float>(0);
  const float* x = c.in_data<float>(1);
  const float* ymax = c.in_data<float>(2);
  auto* ties = static_cast<float*>(workspace());
  const TieCountReducer count{x, ymax, ties};
  POCK_RETURN_IF_ERROR(launched(c, launch_reduce(plan.groups, count, ties + plan.ties_floats, current_stream())));
  const MaxGradMap map{dy, x, ymax, ties, c.out_data<float>(0), plan.back};
  return launched(c, launch_map(numel(c.out(0)), current_stream(), map));
}

}  // namespace

void register_elementwise_grad(KernelTable& t) {
#define POCK_ADD_UNARY_GRAD(name, Op) \
  t.add(planned_kernel<params::ActivationParams, StridedIndex<2>, plan_broadcast<2>, unary_grad<Op>>(name, DType::kF32));
  POCK_CUDA_UNARY_GRAD_OPS(POCK_ADD_UNARY_GRAD)
#undef POCK_ADD_UNARY_GRAD
  t.add(planned_kernel<NoParams, StridedIndex<2>, plan_pair, pair_grad<SelectGradOp<true>>>("MaximumGrad", DType::kF32));
  t.add(planned_kernel<NoParams, StridedIndex<2>, plan_pair, pair_grad<SelectGradOp<false>>>("MinimumGrad", DType::kF32));
  t.add(planned_kernel<NoParams, StridedIndex<2>, plan_pair, pair_grad<PowGradOp>>("PowGrad", DType::kF32));
  t.add(planned_kernel<NoParams, ReducePlan, plan_sum_to_shape, sum_to_shape>("SumToShape", DType::kF32));
  t.add(planned_kernel<params::ReduceParams, StridedIndex<1>, plan_reduce_back, reduce_sum_grad>("ReduceSumGrad", DType::kF32));
  t.add(planned_kernel<params::ReduceParams, MaxGradPlan, plan_max_grad, reduce_max_grad>("ReduceMaxGrad", DType::kF32));
}

}  // namespace pock::cuda
