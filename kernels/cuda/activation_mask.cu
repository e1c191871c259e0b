// The cuda activation_mask family: ClipMask records where an activation's derivative is 1 (a
// byte per element) in the forward pass; MaskGrad multiplies dy by it in the backward. Bit for
// bit what ref writes (activation_mask_logic.hpp); four elements a thread when aligned.
#include "kernels/cuda/activation_mask_logic.hpp"
#include "kernels/cuda/cuda_families.hpp"
#include "kernels/cuda/kernel_launch.cuh"
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/planned_kernel.hpp"

namespace pock::cuda {
namespace {

Status plan_bounds(const pock_op_desc&, const params::ActivationParams& p, MaskBounds* bounds) {
  *bounds = clip_mask_bounds(p);
  return Status::ok();
}

Status clip_mask(const KernelCall& c, const params::ActivationParams&, const MaskBounds& bounds) {
  const ClipMaskMap map{c.in_data<float>(0), c.out_data<uint8_t>(0), bounds};
  const int64_t n = numel(c.out(0));
  if (mask_packable(map.v, map.v, map.mask)) {
    return launched(c, launch_map(n / 4 + n % 4, current_stream(), ClipMaskPackMap{map, n / 4}));
  }
  return launched(c, launch_map(n, current_stream(), map));
}

Status mask_grad(const KernelCall& c) {
  const MaskGradMap map{c.in_data<float>(0), c.in_data<uint8_t>(1), c.out_data<float>(0)};
  const int64_t n = numel(c.out(0));
  if (mask_packable(map.dy, map.dx, map.mask)) {
    return launched(c, launch_map(n / 4 + n % 4, current_stream(), MaskGradPackMap{map, n / 4}));
  }
  return launched(c, launch_map(n, current_stream(), map));
}

}  // namespace

void register_activation_mask(KernelTable& t) {
  t.add(planned_kernel<params::ActivationParams, MaskBounds, plan_bounds, clip_mask>("ClipMask", DType::kF32));
  t.add({"MaskGrad", DType::kF32, mask_grad});
}

}  // namespace pock::cuda
