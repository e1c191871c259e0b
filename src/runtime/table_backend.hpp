// Exposes an in-tree KernelTable through the backend C ABI, so the runtime binds every backend —
// ref, cpu, plugins — through one path.
#pragma once
#include "pock/backend.h"
#include "runtime/kernel.hpp"

namespace pock {

// Fills `out` (abi_version and struct_size set by the caller, as for a plugin's init) with a
// host-memory backend over `table`, which must outlive it. The context it allocates (last error,
// the shared kernel scope) is freed by `destroy`.
pock_status fill_table_backend(pock_backend_v1* out, const char* name, const KernelTable* table);

// The in-tree backends' tables, filled once per process.
const KernelTable& ref_kernels();
const KernelTable& cpu_kernels();  // kernels/cpu: XNNPACK, OpenBLAS, vectorized loops
const KernelTable& neon_kernels();  // kernels/neon: NEON intrinsics (aarch64 builds only)

}  // namespace pock
