// Declarations of the neon backend's per-family registration functions (see neon_families.def).
#pragma once
#include "runtime/kernel.hpp"

namespace pock::neon {

#define POCK_NEON_FAMILY(family) void register_##family(KernelTable& table);
#include "kernels/neon/neon_families.def"
#undef POCK_NEON_FAMILY

}  // namespace pock::neon
