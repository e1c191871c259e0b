// Declarations of the cpu backend's per-family registration functions (see cpu_families.def).
#pragma once
#include "runtime/kernel.hpp"

namespace pock::cpu {

#define POCK_CPU_FAMILY(family) void register_##family(KernelTable& table);
#include "kernels/cpu/cpu_families.def"
#undef POCK_CPU_FAMILY

}  // namespace pock::cpu
