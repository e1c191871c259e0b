// Thin grid wrappers that launch host-testable logic (hd.hpp) on the backend's stream. Each
// returns the launch's error; a kernel's run() turns it into a Status naming the op.
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

namespace pock::cuda {

constexpr int kBlockThreads = 256;

// Enough blocks to fill the device a few times over; the grid-stride loop covers the rest.
inline unsigned grid_for(int64_t n) {
  const int64_t blocks = (n + kBlockThreads - 1) / kBlockThreads;
  return static_cast<unsigned>(std::max<int64_t>(1, std::min<int64_t>(blocks, 65535)));
}

template <typename F>
__global__ void map_kernel(int64_t n, F f) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(blockDim.x) * gridDim.x) {
    f(i);
  }
}

// f(i) for every i in [0, n): the element-wise ops and their gradients.
template <typename F>
cudaError_t launch_map(int64_t n, cudaStream_t stream, F f) {
  if (n <= 0) return cudaSuccess;
  map_kernel<<<grid_for(n), kBlockThreads, 0, stream>>>(n, f);
  return cudaGetLastError();
}

}  // namespace pock::cuda
