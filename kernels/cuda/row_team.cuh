// Device teams for the row routines of kernels/cuda/*_logic.hpp (see row_team.hpp), and the
// launchers that hand each row to one: a warp per row for short rows (no shared memory, no
// barrier), a block per row for long ones, so that wide rows are never one thread's loop.
#pragma once
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>

#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/row_team.hpp"

namespace pock::cuda {

constexpr int kWarp = 32;
constexpr unsigned kFullMask = 0xffffffffu;

__device__ __forceinline__ float warp_sum(float v) {
  for (int offset = kWarp / 2; offset > 0; offset /= 2) v += __shfl_xor_sync(kFullMask, v, offset);
  return v;
}

__device__ __forceinline__ float warp_max(float v) {
  for (int offset = kWarp / 2; offset > 0; offset /= 2) v = fmaxf(v, __shfl_xor_sync(kFullMask, v, offset));
  return v;
}

// The 32 lanes of one warp; every lane must call each reduction (the whole warp runs the row).
struct WarpTeam {
  int lane;
  int lanes = kWarp;
  __device__ float sum(float v) const { return warp_sum(v); }
  __device__ float max(float v) const { return warp_max(v); }
};

// All threads of a block (a multiple of 32, at most 1024). Each reduction is butterflies within
// the warps, then every warp combines the per-warp results itself, which saves the barrier a
// broadcast would need; the leading barrier keeps one reduction from overwriting the slots the
// previous one is still reading.
struct BlockTeam {
  int lane;
  int lanes;
  float* slots;  // shared, one per warp
  template <bool kMax>
  __device__ float reduce(float v) const {
    v = kMax ? warp_max(v) : warp_sum(v);
    __syncthreads();
    if (lane % kWarp == 0) slots[lane / kWarp] = v;
    __syncthreads();
    const int warps = lanes / kWarp;
    const int i = lane % kWarp;
    float t = i < warps ? slots[i] : (kMax ? -INFINITY : 0.0f);
    return kMax ? warp_max(t) : warp_sum(t);
  }
  __device__ float sum(float v) const { return reduce<false>(v); }
  __device__ float max(float v) const { return reduce<true>(v); }
};

constexpr int kRowWarpsPerBlock = 8;
constexpr int kRowBlockThreads = 512;
// Rows up to this long go a warp each: at most 32 elements per lane.
constexpr int64_t kWarpRowLimit = 1024;

// f(team, row) for every row, called by every thread of the row's team.
template <typename F>
__global__ void warp_rows_kernel(int64_t rows, F f) {
  const int warp = threadIdx.x / kWarp;
  const WarpTeam team{static_cast<int>(threadIdx.x % kWarp)};
  for (int64_t row = blockIdx.x * static_cast<int64_t>(kRowWarpsPerBlock) + warp; row < rows;
       row += static_cast<int64_t>(gridDim.x) * kRowWarpsPerBlock) {
    f(team, row);
  }
}

template <typename F>
__global__ void block_rows_kernel(int64_t rows, F f) {
  __shared__ float slots[kWarp];
  const BlockTeam team{static_cast<int>(threadIdx.x), static_cast<int>(blockDim.x), slots};
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) f(team, row);
}

// f(team, row) for rows [0, rows), each `length` elements long: a warp per row or a block per row.
template <typename F>
cudaError_t launch_rows(int64_t rows, int64_t length, cudaStream_t stream, F f) {
  if (rows <= 0) return cudaSuccess;
  if (length <= kWarpRowLimit) {
    const int64_t blocks = (rows + kRowWarpsPerBlock - 1) / kRowWarpsPerBlock;
    warp_rows_kernel<<<static_cast<unsigned>(blocks < 65535 ? blocks : 65535), kRowWarpsPerBlock * kWarp, 0, stream>>>(
        rows, f);
  } else {
    block_rows_kernel<<<static_cast<unsigned>(rows < 65535 ? rows : 65535), kRowBlockThreads, 0, stream>>>(rows, f);
  }
  return cudaGetLastError();
}

// f(SoloTeam, row) for every row, a thread each: rows whose elements are strided, where
// neighbouring threads read neighbouring rows and so stay coalesced.
template <typename F>
struct SoloRow {
  F f;
  __device__ void operator()(int64_t row) const { f(SoloTeam{}, row); }
};

template <typename F>
cudaError_t launch_solo_rows(int64_t rows, cudaStream_t stream, F f) {
  return launch_map(rows, stream, SoloRow<F>{f});
}

// Rows of `extent` values `inner` apart (a softmax along a non-last axis): a thread per row keeps
// neighbouring threads on neighbouring addresses when there are rows enough to fill the device;
// few long rows get a team each instead (strided reads, but no thread walks a whole long row).
constexpr int64_t kSoloRowsEnough = 16384;

template <typename F>
cudaError_t launch_axis_rows(int64_t rows, int64_t extent, int64_t inner, cudaStream_t stream, F f) {
  if (inner == 1 || (rows < kSoloRowsEnough && extent > kWarp)) return launch_rows(rows, extent, stream, f);
  return launch_solo_rows(rows, stream, f);
}

}  // namespace pock::cuda
