// SumToShape with NEON: a broadcast gradient summed back to its operand's shape through the plans of
// kernels/cpu/axis_sum.hpp and the neon loops.
#include "kernels/neon/neon_axis_sum.hpp"
#include "kernels/neon/neon_families.hpp"
#include "kernels/neon/neon_util.hpp"

namespace pock::neon {

void register_sum_to_shape(KernelTable& t) {
  t.add(def("SumToShape", cpu::axis_sum_kernel<cpu::sum_to_shape_plan, neon_axis_sum_loops>, cpu::axis_sum_accepts<cpu::sum_to_shape_plan>));
}

}  // namespace pock::neon
