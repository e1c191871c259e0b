// Device kernels of the reductions over a ReducePlan (reduce_logic.hpp). Two shapes of work:
//   rows: the reduced elements of an output are contiguous (the innermost dim is reduced): a warp
//         per output, or the whole block when each output reduces many elements, lanes reading
//         neighbouring elements; partials combine with warp shuffles (and shared memory across
//         the warps of a block).
//   columns: the innermost dim is kept: the 32 lanes of a warp take 32 neighbouring outputs
//         (coalesced), the block's 8 warps split the reduced elements and combine in shared memory.
// Each output is written once by one thread: no atomics, the same result every run.
#pragma once
#include <cuda_runtime.h>

#include <algorithm>

#include "kernels/cuda/reduce_logic.hpp"

namespace pock::cuda {

constexpr int kReduceThreads = 256;
constexpr int kColumnLanes = 32, kColumnSplit = kReduceThreads / kColumnLanes;
// From this many elements per output, a whole block shares it rather than a warp.
constexpr int64_t kBlockPerOutputFrom = 4096;

template <typename R>
__device__ __forceinline__ float warp_combine(const R& r, float acc) {
  for (int offset = 16; offset > 0; offset /= 2) acc = r.combine(acc, __shfl_xor_sync(0xffffffffu, acc, offset));
  return acc;
}

// kGroup threads (32: a warp; kReduceThreads: the block) per output.
template <typename R, int kGroup>
__global__ void __launch_bounds__(kReduceThreads) reduce_rows_kernel(ReducePlan p, R r) {
  __shared__ float partials[kReduceThreads / 32];
  constexpr int kGroupsPerBlock = kReduceThreads / kGroup;
  const int lane = threadIdx.x % kGroup;
  for (int64_t o = static_cast<int64_t>(blockIdx.x) * kGroupsPerBlock + threadIdx.x / kGroup; o < p.outputs;
       o += static_cast<int64_t>(gridDim.x) * kGroupsPerBlock) {
    float acc = warp_combine(r, lane_partial(p, r, o, lane, kGroup));
    if constexpr (kGroup > 32) {
      // Every thread of the block runs this loop for the same o: the barriers are uniform.
      if (lane % 32 == 0) partials[lane / 32] = acc;
      __syncthreads();
      if (lane < 32) acc = warp_combine(r, lane < kGroup / 32 ? partials[lane] : r.init());
      __syncthreads();
    }
    if (lane == 0) r.store(o, acc);
  }
}

template <typename R>
__global__ void __launch_bounds__(kReduceThreads) reduce_columns_kernel(ReducePlan p, R r) {
  __shared__ float partials[kColumnSplit][kColumnLanes + 1];
  const int lane = threadIdx.x % kColumnLanes, part = threadIdx.x / kColumnLanes;
  for (int64_t first = static_cast<int64_t>(blockIdx.x) * kColumnLanes; first < p.outputs;
       first += static_cast<int64_t>(gridDim.x) * kColumnLanes) {
    const int64_t o = first + lane;
    // Out-of-range lanes still take part in the barriers, with nothing to add.
    partials[part][lane] = o < p.outputs ? lane_partial(p, r, o, part, kColumnSplit) : r.init();
    __syncthreads();
    if (part == 0 && o < p.outputs) {
      float acc = partials[0][lane];
      for (int k = 1; k < kColumnSplit; ++k) acc = r.combine(acc, partials[k][lane]);
      r.store(o, acc);
    }
    __syncthreads();
  }
}

inline unsigned reduce_grid(int64_t work_items) {
  return static_cast<unsigned>(std::max<int64_t>(1, std::min<int64_t>(work_items, 65535)));
}

template <typename R>
cudaError_t launch_reduce(const ReducePlan& p, const R& r, cudaStream_t stream) {
  if (p.outputs <= 0) return cudaSuccess;
  if (!p.rows) {
    reduce_columns_kernel<R><<<reduce_grid((p.outputs + kColumnLanes - 1) / kColumnLanes), kReduceThreads, 0, stream>>>(p, r);
  } else if (p.length >= kBlockPerOutputFrom) {
    reduce_rows_kernel<R, kReduceThreads><<<reduce_grid(p.outputs), kReduceThreads, 0, stream>>>(p, r);
  } else {
    constexpr int kWarps = kReduceThreads / 32;
    reduce_rows_kernel<R, 32><<<reduce_grid((p.outputs + kWarps - 1) / kWarps), kReduceThreads, 0, stream>>>(p, r);
  }
  return cudaGetLastError();
}

}  // namespace pock::cuda
