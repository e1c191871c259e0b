// The cuda kernel of SliceGrad (layer_grad_shape, f32 as ref): dx zeroed, then dy scattered to
// starts + index * steps along every axis — Slice's gather run backwards (shape_logic.hpp).
#include "kernels/cuda/cuda_families.hpp"
#include "kernels/cuda/element_width.hpp"
#include "kernels/cuda/kernel_launch.cuh"
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/planned_kernel.hpp"
#include "kernels/cuda/shape_logic.hpp"

namespace pock::cuda {
namespace {

Status plan_slice_grad(const pock_op_desc& op, const params::ShapeParams& p, MovePlan* plan) {
  const size_t rank = static_cast<size_t>(op.inputs[0].rank);
  if (p.starts.size() != rank || p.steps.size() != rank) {
    return Status(Code::kInvalidArgument,
                  std::string(op.op) + " '" + op.name + "': starts and steps need one value per axis");
  }
  *plan = move_plan(slice_grad_index(op.inputs[0], op.outputs[0], p), sizeof(float));
  return Status::ok();
}

Status slice_grad(const KernelCall& c, const params::ShapeParams&, const MovePlan& plan) {
  POCK_RETURN_IF_ERROR(launched(c, cudaMemsetAsync(c.out(0).data, 0, c.out(0).nbytes, current_stream())));
  const MoveLaunch l = move_launch(plan, sizeof(float), c.in(0).data, c.out(0).data, numel(c.in(0)));
  return with_move_width(l.bytes, [&](auto t) {
    using T = decltype(t);
    return launched(c, launch_map(l.moves, current_stream(), ScatterMap<T>{c.in_data<T>(0), c.out_data<T>(0), *l.index}));
  });
}

}  // namespace

void register_layer_grad_shape(KernelTable& t) {
  t.add(planned_kernel<params::ShapeParams, MovePlan, plan_slice_grad, slice_grad>("SliceGrad", DType::kF32));
}

}  // namespace pock::cuda
