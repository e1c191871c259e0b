// Conv2dGradBias with NEON: dy summed per output channel through the plans of
// kernels/cpu/axis_sum.hpp and the neon loops.
#include "kernels/neon/neon_axis_sum.hpp"
#include "kernels/neon/neon_families.hpp"
#include "kernels/neon/neon_util.hpp"

namespace pock::neon {

void register_conv_grad_bias(KernelTable& t) {
  t.add(def("Conv2dGradBias", cpu::axis_sum_kernel<cpu::conv_grad_bias_plan, neon_axis_sum_loops>, cpu::axis_sum_accepts<cpu::conv_grad_bias_plan>));
}

}  // namespace pock::neon
