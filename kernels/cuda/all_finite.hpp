// The device side of the pock_all_finite and pock_all_finite_many extensions: whether a buffer
// holds any NaN or Inf.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>

#include "pock/pock.h"

namespace pock::cuda {

// Sets *flag (mapped pinned memory the kernel writes through flag_device) to `mark` (non-zero)
// when some element of `data` is NaN or Inf; leaves it alone otherwise. Floating dtypes only (f32,
// f16, bf16). Launched for several buffers with a mark each, *flag ends up as the mark of one of
// those that hold NaN or Inf: the stores are plain, so which one is unspecified, and any is a
// correct answer.
cudaError_t launch_find_non_finite(const void* data, size_t nbytes, pock_dtype dtype, int32_t* flag_device,
                                   int32_t mark, cudaStream_t stream);

}  // namespace pock::cuda
