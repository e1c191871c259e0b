#include "kernels/cpu/layout.hpp"

#include <algorithm>

namespace pock::cpu {
namespace {

// Square tiles keep both the reads and the writes of a transpose within a few cache lines.
constexpr int64_t kTile = 16;

// dst[c][r] = src[r][c] + add[c] for a rows x cols block; `add` may be null.
void transpose_block(const float* src, int64_t src_stride, float* dst, int64_t dst_stride, int64_t rows, int64_t cols,
                     const float* add) {
  for (int64_t c = 0; c < cols; ++c) {
    const float a = add ? add[c] : 0.0f;
    for (int64_t r = 0; r < rows; ++r) dst[c * dst_stride + r] = src[r * src_stride + c] + a;
  }
}

// Transposes `batch` row-major [rows][cols] matrices into [cols][rows], adding add[col] when given.
// Work is split over (matrix, row tile) pairs.
void batched_transpose(const float* src, float* dst, int64_t batch, int64_t rows, int64_t cols, const float* add,
                       pthreadpool_t pool) {
  const int64_t row_tiles = (rows + kTile - 1) / kTile;
  const size_t tasks = static_cast<size_t>(batch * row_tiles);
  parallel_for(pool, tasks, balanced_tile(pool, tasks, 4), [&](size_t begin, size_t end) {
    for (size_t t = begin; t < end; ++t) {
      const int64_t b = static_cast<int64_t>(t) / row_tiles;
      const int64_t r0 = static_cast<int64_t>(t) % row_tiles * kTile;
      const int64_t r_count = std::min(kTile, rows - r0);
      const float* s = src + b * rows * cols;
      float* d = dst + b * rows * cols;
      for (int64_t c0 = 0; c0 < cols; c0 += kTile) {
        transpose_block(s + r0 * cols + c0, cols, d + c0 * rows + r0, rows, r_count, std::min(kTile, cols - c0),
                        add ? add + c0 : nullptr);
      }
    }
  });
}

}  // namespace

void nchw_to_nhwc(const float* x, float* y, int64_t batch, int64_t channels, int64_t plane, pthreadpool_t pool) {
  batched_transpose(x, y, batch, channels, plane, nullptr, pool);
}

void nhwc_to_nchw(const float* x, const float* bias, float* y, int64_t batch, int64_t channels, int64_t plane,
                  pthreadpool_t pool) {
  batched_transpose(x, y, batch, plane, channels, bias, pool);
}

}  // namespace pock::cpu
