// What the CUDA block_quant kernels share (block_quant.cu, block_quant_head.cu): the tiled
// product's launch, the workspace layout of quantized blocks, and the quantizing launches.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/cuda/block_quant_int8_logic.hpp"
#include "kernels/cuda/block_quant_logic.hpp"
#include "kernels/cuda/kernel_launch.cuh"
#include "kernels/cuda/row_team.cuh"
#include "kernels/cuda/scratch_layout.hpp"
#include "kernels/cuda/stream.hpp"
#include "kernels/params/block_quant.hpp"

namespace pock::cuda {

inline int64_t leading_rows(const pock_tensor_desc& t) {
  int64_t rows = 1;
  for (int d = 0; d + 1 < t.rank; ++d) rows *= t.dims[d];
  return rows;
}

inline QuantRows quant_rows(const KernelCall& c, int input, const params::BlockQuantParams& p) {
  return {c.in_data<uint8_t>(input), c.in(input).dims[0], p.row_bytes, p.format};
}

// One block per 64 x 64 tile of the product (block_quant_logic.hpp): load, barrier, accumulate,
// barrier, per 32-deep step.
template <typename Tile, typename G>
__global__ void __launch_bounds__(kTileThreads) quant_gemm_kernel(G g) {
  __shared__ Tile tile;
  const int64_t m0 = static_cast<int64_t>(blockIdx.y) * kTileM, n0 = static_cast<int64_t>(blockIdx.x) * kTileN;
  float acc[4][4] = {};
  for (int64_t k0 = 0; k0 < g.k; k0 += kTileK) {
    g.load(tile, m0, n0, k0, threadIdx.x);
    __syncthreads();
    g.accumulate(tile, threadIdx.x, acc);
    __syncthreads();
  }
  g.store(m0, n0, threadIdx.x, acc);
}

template <typename Tile, typename G>
Status launch_gemm(const KernelCall& c, const G& g) {
  if (g.m == 0 || g.n == 0) return Status::ok();
  const int64_t row_tiles = (g.m + kTileM - 1) / kTileM;
  if (row_tiles > 65535) return c.error("more rows than one launch covers");
  const dim3 grid(static_cast<unsigned>((g.n + kTileN - 1) / kTileN), static_cast<unsigned>(row_tiles));
  quant_gemm_kernel<Tile><<<grid, kTileThreads, 0, current_stream()>>>(g);
  return launched(c, cudaGetLastError());
}

// `values` quantized in 32-value blocks: the integers, and per block the scale and integer sum.
struct QuantizedBlocks {
  int8_t* q;
  float* scales;
  int32_t* sums;
};

inline QuantizedBlocks quantized_blocks(ScratchLayout& layout, int64_t values) {
  QuantizedBlocks b;
  b.q = layout.take<int8_t>(values);
  b.scales = layout.take<float>(values / 32);
  b.sums = layout.take<int32_t>(values / 32);
  return b;
}

// `values` floats at v (a multiple of 32) quantized into `to`, a warp per block.
inline Status quantize(const KernelCall& c, const float* v, int64_t values, const QuantizedBlocks& to) {
  return launched(c, launch_rows(values / 32, 32, current_stream(), QuantizeBlocks{v, to.q, to.scales, to.sums}));
}

// The weight's columns over each 32 rows quantized into `to` ([rows / 32, cols, 32]).
inline Status quantize_columns(const KernelCall& c, const QuantRows& w, int64_t cols, const QuantizedBlocks& to) {
  const QuantizeColumns columns{w, cols, to.q, to.scales};
  return launched(c, launch_rows(w.rows / 32 * cols, 32, current_stream(), columns));
}

}  // namespace pock::cuda
