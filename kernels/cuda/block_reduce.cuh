// Reductions inside one thread block, for the kernels whose result is a sum or a maximum (losses,
// norms). Deterministic: a fixed tree over a fixed assignment of elements to threads, so that a
// step gives the same bits on every run.
#pragma once
#include <cuda_runtime.h>

namespace pock::cuda {

struct SumOp {
  template <typename T> __device__ T operator()(T a, T b) const { return a + b; }
};
struct MaxOp {
  template <typename T> __device__ T operator()(T a, T b) const { return a > b ? a : b; }
};

// Every thread of the block gets op over all threads' `v`. blockDim.x: a multiple of 32, <= 1024.
// Every thread must call it (it synchronizes the block).
template <typename T, typename Op>
__device__ T block_reduce(T v, Op op, T identity) {
  __shared__ T partial[32];
  const unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
  for (int offset = 16; offset > 0; offset >>= 1) v = op(v, __shfl_down_sync(0xffffffffu, v, offset));
  if (lane == 0) partial[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < (blockDim.x >> 5) ? partial[lane] : identity;
    for (int offset = 16; offset > 0; offset >>= 1) v = op(v, __shfl_down_sync(0xffffffffu, v, offset));
    if (lane == 0) partial[0] = v;
  }
  __syncthreads();
  const T result = partial[0];
  __syncthreads();  // the next call may overwrite partial[]
  return result;
}

}  // namespace pock::cuda
