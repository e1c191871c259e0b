// The cuda backend's kernel table and its built-in init (pock::builtin_backend_init_cuda), in
// plain C++ without CUDA headers, for tests and tools.
#pragma once
#include "pock/backend.h"
#include "runtime/kernel.hpp"

namespace pock {

// Every cuda kernel, from kernels/cuda/cuda_families.def; filled once per process.
const KernelTable& cuda_kernels();

pock_status builtin_backend_init_cuda(pock_backend_v1* out);

}  // namespace pock
