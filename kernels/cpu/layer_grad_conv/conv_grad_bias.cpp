// Conv2dGradBias on the cpu backend: dy [N, O, H, W] summed per output channel through
// axis_sum.hpp (only the first `channels` under a partial-channel update).
#include "kernels/cpu/axis_sum.hpp"
#include "kernels/cpu/cpu_families.hpp"
#include "kernels/cpu/cpu_util.hpp"

namespace pock::cpu {

void register_conv_grad_bias(KernelTable& t) {
  t.add(f32_kernel("Conv2dGradBias", axis_sum_kernel<conv_grad_bias_plan, cpu_axis_sum_loops>,
                   axis_sum_accepts<conv_grad_bias_plan>));
}

}  // namespace pock::cpu
