// The cuda backend's kernel table and its built-in init (pock::builtin_backend_init_cuda), in
// plain C++ without CUDA headers, for tests and tools.
#pragma once
#include "pock/backend.h"
#include "runtime/kernel.hpp"

namespace pock {

// Every cuda kernel, from kernels/cuda/cuda_families.def; filled once per process.
const KernelTable& cuda_kernels();

pock_status builtin_backend_init_cuda(pock_backend_v1* out);

// get_proc_address name of a size_t (*)(void* context): the CUDA graphs the instance has
// captured (none with POCK_CUDA_GRAPHS=0; kernels/cuda/step_graphs.hpp). Tests and diagnostics.
inline constexpr const char* kCudaGraphCountExtension = "pock_cuda_graph_count";

}  // namespace pock
