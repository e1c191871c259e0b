// Declarations of the cuda backend's per-family registration functions (see cuda_families.def).
#pragma once
#include "runtime/kernel.hpp"

namespace pock::cuda {

#define POCK_CUDA_FAMILY(family) void register_##family(KernelTable& table);
#include "kernels/cuda/cuda_families.def"
#undef POCK_CUDA_FAMILY

}  // namespace pock::cuda
