// Column sums of per-element terms over the rows of a [rows, columns] tensor (the dgamma, dbeta
// of row norms): out_k[j] = sum_r terms(r, j)_k. A block covers 32 columns (neighbouring threads
// read neighbouring addresses) with 8 lanes down the rows; the rows split into chunks, so that a
// few hundred columns still fill the device, whose partial sums go to the backend's workspace
// and a second pass adds them up in a fixed order: the result is deterministic, unlike atomics.
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

namespace pock::cuda {

constexpr int kColumnTile = 32;
constexpr int kColumnLanes = 8;
constexpr int64_t kRowsPerChunk = 256;
constexpr int64_t kMaxChunks = 64;

inline int64_t column_chunks(int64_t rows) {
  return std::max<int64_t>(1, std::min(kMaxChunks, (rows + kRowsPerChunk - 1) / kRowsPerChunk));
}

// Workspace the two passes need for `kTerms` sums (0 when one chunk writes the outputs itself).
inline size_t column_sum_scratch(int terms, int64_t rows, int64_t columns) {
  const int64_t chunks = column_chunks(rows);
  return chunks > 1 ? static_cast<size_t>(terms) * chunks * columns * sizeof(float) : 0;
}

// `outs` holds the kTerms output pointers.
template <int kTerms>
struct ColumnOutputs {
  float* out[kTerms];
};

template <typename Terms>
__global__ void column_partials_kernel(int64_t rows, int64_t columns, int64_t chunks, Terms terms,
                                       ColumnOutputs<Terms::kTerms> outs, float* partials) {
  __shared__ float tile[Terms::kTerms][kColumnLanes][kColumnTile];
  const int64_t j = blockIdx.x * static_cast<int64_t>(kColumnTile) + threadIdx.x;
  const int64_t chunk = blockIdx.y;
  const int64_t per_chunk = (rows + chunks - 1) / chunks;
  const int64_t begin = chunk * per_chunk, end = min(rows, begin + per_chunk);
  float acc[Terms::kTerms] = {};
  if (j < columns) {
    for (int64_t r = begin + threadIdx.y; r < end; r += kColumnLanes) {
      float t[Terms::kTerms];
      terms(r, j, t);
      for (int k = 0; k < Terms::kTerms; ++k) acc[k] += t[k];
    }
  }
  for (int k = 0; k < Terms::kTerms; ++k) tile[k][threadIdx.y][threadIdx.x] = acc[k];
  __syncthreads();
  if (threadIdx.y != 0 || j >= columns) return;
  for (int k = 0; k < Terms::kTerms; ++k) {
    float total = 0.0f;
    for (int lane = 0; lane < kColumnLanes; ++lane) total += tile[k][lane][threadIdx.x];
    if (chunks == 1) {
      outs.out[k][j] = total;
    } else {
      partials[(k * chunks + chunk) * columns + j] = total;
    }
  }
}

template <int kTerms>
__global__ void column_finish_kernel(int64_t columns, int64_t chunks, const float* partials, ColumnOutputs<kTerms> outs) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < kTerms * columns;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t k = i / columns, j = i % columns;
    float total = 0.0f;
    for (int64_t c = 0; c < chunks; ++c) total += partials[(k * chunks + c) * columns + j];
    outs.out[k][j] = total;
  }
}

// `partials` must hold column_sum_scratch(Terms::kTerms, rows, columns) bytes.
template <typename Terms>
cudaError_t launch_column_sums(int64_t rows, int64_t columns, Terms terms, ColumnOutputs<Terms::kTerms> outs,
                               float* partials, cudaStream_t stream) {
  if (columns <= 0) return cudaSuccess;
  const int64_t chunks = column_chunks(rows);
  const dim3 grid(static_cast<unsigned>((columns + kColumnTile - 1) / kColumnTile), static_cast<unsigned>(chunks));
  column_partials_kernel<<<grid, dim3(kColumnTile, kColumnLanes), 0, stream>>>(rows, columns, chunks, terms, outs,
                                                                               partials);
  if (chunks > 1) {
    const int64_t n = Terms::kTerms * columns;
    const unsigned blocks = static_cast<unsigned>(std::min<int64_t>((n + 255) / 256, 65535));
    column_finish_kernel<<<blocks, 256, 0, stream>>>(columns, chunks, partials, outs);
  }
  return cudaGetLastError();
}

}  // namespace pock::cuda
