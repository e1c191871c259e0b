// SumToShape on the cpu backend: a broadcast gradient summed back to its operand's shape through
// axis_sum.hpp. Patterns axis_sum does not cover (a summed axis between two kept ones) run on ref.
#include "kernels/cpu/axis_sum.hpp"
#include "kernels/cpu/cpu_families.hpp"
#include "kernels/cpu/cpu_util.hpp"

namespace pock::cpu {

void register_sum_to_shape(KernelTable& t) {
  t.add(f32_kernel("SumToShape", axis_sum_kernel<sum_to_shape_plan, cpu_axis_sum_loops>,
                   axis_sum_accepts<sum_to_shape_plan>));
}

}  // namespace pock::cpu
