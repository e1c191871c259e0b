// Device kernels of the reductions over a ReducePlan (reduce_logic.hpp, which also chooses the
// split). Two shapes of work:
//   rows: the reduced elements of an output are contiguous (the innermost dim is reduced): a warp
//         per output, or the whole block when each output reduces many elements, lanes reading
//         neighbouring elements; partials combine with warp shuffles (and shared memory across
//         the warps of a block).
//   columns: the innermost dim is kept: the 32 lanes of a warp take 32 neighbouring outputs
//         (coalesced), the block's 8 warps share the reduced elements and combine in shared memory.
// Sliced plans (few outputs, many elements each) spread each output over several blocks, leave
// partials in the workspace and combine them in a second kernel. Each value is written by one
// thread: no atomics, the same result every run.
#pragma once
#include <cuda_runtime.h>

#include <algorithm>

#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/reduce_logic.hpp"

namespace pock::cuda {

// Combines the partials of kWidth neighbouring lanes (aligned groups within a warp).
template <int kWidth, typename R>
__device__ __forceinline__ float warp_combine(const R& r, float acc) {
  for (int offset = kWidth / 2; offset > 0; offset /= 2) acc = r.combine(acc, __shfl_xor_sync(0xffffffffu, acc, offset));
  return acc;
}

// kGroup threads (8, 32: a warp; kReduceThreads: the block) per (output, slice) work item. The
// loop runs the same number of times for every thread of the block, out-of-range groups adding
// nothing, so the shuffles always see full warps and the barriers the whole block.
template <typename R, int kGroup>
__global__ void __launch_bounds__(kReduceThreads) reduce_rows_kernel(ReducePlan p, R r, float* partials) {
  __shared__ float warp_results[kReduceThreads / 32];
  constexpr int kGroupsPerBlock = kReduceThreads / kGroup;
  const int lane = threadIdx.x % kGroup;
  const int64_t items = p.outputs * p.slices;
  for (int64_t first = static_cast<int64_t>(blockIdx.x) * kGroupsPerBlock; first < items;
       first += static_cast<int64_t>(gridDim.x) * kGroupsPerBlock) {
    const int64_t w = first + threadIdx.x / kGroup;
    const bool valid = w < items;
    const int64_t o = valid ? index_div(w, p.slices) : 0, slice = w - o * p.slices;
    float acc = valid ? lane_partial(p, r, o, slice, lane, kGroup) : r.init();
    acc = warp_combine<(kGroup < 32 ? kGroup : 32)>(r, acc);
    if constexpr (kGroup > 32) {
      if (lane % 32 == 0) warp_results[lane / 32] = acc;
      __syncthreads();
      if (lane < 32) acc = warp_combine<32>(r, lane < kGroup / 32 ? warp_results[lane] : r.init());
      __syncthreads();
    }
    if (valid && lane == 0) store_slice(p, r, partials, o, slice, acc);
  }
}

// blockIdx.y is the slice.
template <typename R>
__global__ void __launch_bounds__(kReduceThreads) reduce_columns_kernel(ReducePlan p, R r, float* partials) {
  __shared__ float part_results[kColumnSplit][kColumnLanes + 1];
  const int lane = threadIdx.x % kColumnLanes, part = threadIdx.x / kColumnLanes;
  const int64_t slice = blockIdx.y;
  for (int64_t first = static_cast<int64_t>(blockIdx.x) * kColumnLanes; first < p.outputs;
       first += static_cast<int64_t>(gridDim.x) * kColumnLanes) {
    const int64_t o = first + lane;
    // Out-of-range lanes still take part in the barriers, with nothing to add.
    part_results[part][lane] = o < p.outputs ? lane_partial(p, r, o, slice, part, kColumnSplit) : r.init();
    __syncthreads();
    if (part == 0 && o < p.outputs) {
      float acc = part_results[0][lane];
      for (int k = 1; k < kColumnSplit; ++k) acc = r.combine(acc, part_results[k][lane]);
      store_slice(p, r, partials, o, slice, acc);
    }
    __syncthreads();
  }
}

inline unsigned reduce_grid(int64_t work_items) {
  return static_cast<unsigned>(std::max<int64_t>(1, std::min<int64_t>(work_items, 65535)));
}

// `partials`: reduce_workspace_bytes(p) of device scratch (unused, may be null, for one slice).
template <typename R>
cudaError_t launch_reduce(const ReducePlan& p, const R& r, float* partials, cudaStream_t stream) {
  if (p.outputs <= 0) return cudaSuccess;
  if (!p.rows) {
    const dim3 grid(reduce_grid((p.outputs + kColumnLanes - 1) / kColumnLanes), static_cast<unsigned>(p.slices));
    reduce_columns_kernel<R><<<grid, kReduceThreads, 0, stream>>>(p, r, partials);
  } else if (p.group == kReduceThreads) {
    reduce_rows_kernel<R, kReduceThreads><<<reduce_grid(p.outputs * p.slices), kReduceThreads, 0, stream>>>(p, r, partials);
  } else if (p.group == 32) {
    constexpr int kWarps = kReduceThreads / 32;
    reduce_rows_kernel<R, 32><<<reduce_grid((p.outputs * p.slices + kWarps - 1) / kWarps), kReduceThreads, 0, stream>>>(p, r, partials);
  } else {
    constexpr int kGroups = kReduceThreads / kShortRowGroup;
    reduce_rows_kernel<R, kShortRowGroup>
        <<<reduce_grid((p.outputs * p.slices + kGroups - 1) / kGroups), kReduceThreads, 0, stream>>>(p, r, partials);
  }
  if (p.slices == 1) return cudaGetLastError();
  if (const cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
  return launch_map(p.outputs, stream, CombineSlices<R>{p, r, partials});
}

}  // namespace pock::cuda
