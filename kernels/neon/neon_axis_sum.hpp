// The neon backend's loops for the gradient sums of kernels/cpu/axis_sum.hpp (axis_sum_loops.cpp),
// used by its SumToShape and Conv2dGradBias kernels.
#pragma once
#include "kernels/cpu/axis_sum.hpp"

namespace pock::neon {

const cpu::AxisSumLoops& neon_axis_sum_loops();

}  // namespace pock::neon
