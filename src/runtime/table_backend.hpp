// Exposes an in-tree KernelTable through the backend C ABI, so the runtime binds every backend —
// ref, cpu, plugins — through one path.
#pragma once
#include <memory>
#include <string>

#include "pock/backend.h"
#include "runtime/kernel.hpp"

namespace pock {

// The returned struct's context owns nothing but a pointer to `table` (which must outlive it)
// and the last error message.
std::unique_ptr<pock_backend_v1, void (*)(pock_backend_v1*)> make_table_backend(const char* name,
                                                                               const KernelTable* table);

// The in-tree backends' tables, filled once per process.
const KernelTable& ref_kernels();
const KernelTable& cpu_kernels();  // kernels/cpu: XNNPACK, OpenBLAS, vectorized loops
const KernelTable& neon_kernels();  // kernels/neon: NEON intrinsics (aarch64 builds only)

}  // namespace pock
