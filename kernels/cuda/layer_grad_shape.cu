// The cuda kernel of SliceGrad (layer_grad_shape, f32 as ref): dx zeroed, then dy scattered to
// starts + index * steps along every axis — Slice's gather run backwards (shape_logic.hpp).
#include "kernels/cuda/cuda_families.hpp"
#include "kernels/cuda/kernel_launch.cuh"
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/planned_kernel.hpp"
#include "kernels/cuda/shape_logic.hpp"

namespace pock::cuda {
namespace {

Status plan_slice_grad(const pock_op_desc& op, const params::ShapeParams& p, StridedIndex<1>* index) {
  const size_t rank = static_cast<size_t>(op.inputs[0].rank);
  if (p.starts.size() != rank || p.steps.size() != rank) {
    return Status(Code::kInvalidArgument,
                  std::string(op.op) + " '" + op.name + "': starts and steps need one value per axis");
  }
  *index = slice_grad_index(op.inputs[0], op.outputs[0], p);
  return Status::ok();
}

Status slice_grad(const KernelCall& c, const params::ShapeParams&, const StridedIndex<1>& index) {
  POCK_RETURN_IF_ERROR(launched(c, cudaMemsetAsync(c.out(0).data, 0, c.out(0).nbytes, current_stream())));
  const ScatterMap<float> map{c.in_data<float>(0), c.out_data<float>(0), index};
  return launched(c, launch_map(numel(c.in(0)), current_stream(), map));
}

}  // namespace

void register_layer_grad_shape(KernelTable& t) {
  t.add(planned_kernel<params::ShapeParams, StridedIndex<1>, plan_slice_grad, slice_grad>("SliceGrad", DType::kF32));
}

}  // namespace pock::cuda
