// The neon backend's loops for the BatchNorm steps of kernels/cpu/batch_norm_steps.hpp
// (batch_norm_loops.cpp), used by its BatchNormTrain and BatchNorm gradient kernels.
#pragma once
#include "kernels/cpu/batch_norm_steps.hpp"

namespace pock::neon {

const cpu::BatchNormLoops& neon_batch_norm_loops();

}  // namespace pock::neon
