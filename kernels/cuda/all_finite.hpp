// The pock_all_finite extension's device side: whether a buffer holds any NaN or Inf.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>

#include "pock/pock.h"

namespace pock::cuda {

// Sets *flag (mapped pinned memory the kernel writes through flag_device) to 1 when some element
// of `data` is NaN or Inf; leaves it alone otherwise. Floating dtypes only (f32, f16, bf16).
cudaError_t launch_find_non_finite(const void* data, size_t nbytes, pock_dtype dtype, int32_t* flag_device,
                                   cudaStream_t stream);

}  // namespace pock::cuda
