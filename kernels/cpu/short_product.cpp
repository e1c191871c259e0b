#include "kernels/cpu/short_product.hpp"

#include <algorithm>

#include "kernels/cpu/vec8.hpp"

namespace pock::cpu {
namespace {

#pragma GCC diagnostic ignored "-Wpsabi"  // the Vec helpers below are inlined (vec8.hpp)
using Vec = simd::Vec8;
using simd::load8;
using simd::store8;
using simd::splat8;
using simd::clamp8;

// Where a tile reads its input: x points at row 0 of the tile's first column, row k lies
// x_stride floats further on per k (the input itself, or the staged copy below).
template <int R>
POCK_SIMD_INLINE void tile(const ShortProduct& p, const float* w, int64_t row, int64_t px, const float* x,
                           int64_t x_stride) {
  Vec acc[R][2];
#pragma GCC unroll 6
  for (int r = 0; r < R; ++r) acc[r][0] = acc[r][1] = splat8(p.bias ? p.bias[row + r] : 0.0f);
  const int64_t rs = p.row_stride;
  for (int64_t k = 0; k < p.depth; ++k, x += x_stride, w += p.depth_stride) {
    const Vec x0 = load8(x), x1 = load8(x + 8);
#pragma GCC unroll 6
    for (int r = 0; r < R; ++r) {
      acc[r][0] += w[r * rs] * x0;
      acc[r][1] += w[r * rs] * x1;
    }
  }
  const Vec lo = splat8(p.lo), hi = splat8(p.hi);
#pragma GCC unroll 6
  for (int r = 0; r < R; ++r) {
    float* y = p.out + (row + r) * p.plane + px;
    store8(y, clamp8(acc[r][0], lo, hi));
    store8(y + 8, clamp8(acc[r][1], lo, hi));
  }
}

// The pixels past the last whole tile of a row block, one at a time; x as for tile, at `begin`.
POCK_SIMD_INLINE void ragged_pixels(const ShortProduct& p, const float* w, int64_t row, int64_t rows, int64_t begin,
                                    int64_t end, const float* x, int64_t x_stride) {
  for (int64_t r = 0; r < rows; ++r) {
    const float b = p.bias ? p.bias[row + r] : 0.0f;
    for (int64_t px = begin; px < end; ++px) {
      float s = b;
      for (int64_t k = 0; k < p.depth; ++k) s += w[r * p.row_stride + k * p.depth_stride] * x[k * x_stride + px - begin];
      s = s < p.lo ? p.lo : s;
      p.out[(row + r) * p.plane + px] = s > p.hi ? p.hi : s;
    }
  }
}

// Every output row of columns [begin, end), their input read from x (at column `begin`).
POCK_SIMD_INLINE void rows_of_columns(const ShortProduct& p, int64_t begin, int64_t end, const float* x,
                                      int64_t x_stride) {
  for (int64_t row = 0; row < p.rows; row += kShortRows) {
    const int64_t rows = std::min(kShortRows, p.rows - row);
    const float* w = p.a + (row / kShortRows) * p.block_stride;
    int64_t px = begin;
    for (; px + kShortPixels <= end; px += kShortPixels) {
      const float* xt = x + (px - begin);
      switch (rows) {
        case 6: tile<6>(p, w, row, px, xt, x_stride); break;
        case 5: tile<5>(p, w, row, px, xt, x_stride); break;
        case 4: tile<4>(p, w, row, px, xt, x_stride); break;
        case 3: tile<3>(p, w, row, px, xt, x_stride); break;
        case 2: tile<2>(p, w, row, px, xt, x_stride); break;
        default: tile<1>(p, w, row, px, xt, x_stride); break;
      }
    }
    if (px < end) ragged_pixels(p, w, row, rows, px, end, x + (px - begin), x_stride);
  }
}

// A tile reads 16 columns of every input row, rows `plane` floats apart. When that distance is a
// multiple of 2-4 KB, the rows share a few of L1's sets (the set index is the address's bits
// 6-11), more rows than the cache has ways evict each other, and every read of the reduction
// misses L1: MobileNetV2's 16 -> 96 expansion at 64x64 (rows 16 KB apart) ran at 36 GFLOP/s,
// 67 with its rows 64 bytes further apart. Such inputs are staged, a block of columns at a time,
// into contiguous rows on the stack; the copy is one read of what the tiles read anyway.
constexpr int64_t kStageFloats = 6144;  // 24 KB: half of L1, beside the weights and the output

int64_t distinct_row_offsets(int64_t plane) {  // row starts with distinct addresses modulo 4 KB
  const int64_t bytes = plane * static_cast<int64_t>(sizeof(float));
  int64_t g = 4096, b = bytes % 4096;
  while (b != 0) {
    const int64_t t = g % b;
    g = b;
    b = t;
  }
  return 4096 / g;
}

int64_t input_stride(const ShortProduct& p) { return p.in_stride ? p.in_stride : p.plane; }

// The columns staged per block: a task's kShortChunk, or 0 where staging measured no faster in
// MobileNetV2's step: rows 1 KB apart (four offsets), fewer than 8 row blocks to share the copy
// (the projections 32 -> 16 at 64x64 and 96 -> 24 at 32x32 lost 10 %), or a deep reduction whose
// chunk would not fit (144 -> 24 at 32x32, 10 % slower staged in blocks of 32).
int64_t stage_columns(const ShortProduct& p) {
  if (distinct_row_offsets(input_stride(p)) > 2 || p.depth <= 8 || p.rows < 8 * kShortRows ||
      p.depth * kShortChunk > kStageFloats)
    return 0;
  return kShortChunk;
}

POCK_SIMD_CLONES void short_product_columns_impl(const ShortProduct& p, int64_t begin, int64_t end) {
  const int64_t staged = stage_columns(p);
  if (staged == 0) {
    rows_of_columns(p, begin, end, p.in + begin, input_stride(p));
    return;
  }
  alignas(64) float stage[kStageFloats];
  for (int64_t c = begin; c < end; c += staged) {
    const int64_t n = std::min(staged, end - c);
    for (int64_t k = 0; k < p.depth; ++k) {
      const float* from = p.in + k * input_stride(p) + c;
      float* to = stage + k * staged;
      int64_t i = 0;
      for (; i + 8 <= n; i += 8) store8(to + i, load8(from + i));
      for (; i < n; ++i) to[i] = from[i];
    }
    rows_of_columns(p, c, c + n, stage, staged);
  }
}

}  // namespace

int64_t short_product_input_stride(int64_t plane) {
  return distinct_row_offsets(plane) > 2 ? plane : plane + 64 / static_cast<int64_t>(sizeof(float));
}

void short_product_columns(const ShortProduct& p, int64_t begin, int64_t end) {
  short_product_columns_impl(p, begin, end);
}

void run_short_product(const ShortProduct& p, pthreadpool_t pool) {
  const size_t chunks = static_cast<size_t>((p.plane + kShortChunk - 1) / kShortChunk);
  parallel_for(pool, chunks, balanced_tile(pool, chunks, 1), [&](size_t begin, size_t end) {
    short_product_columns_impl(p, static_cast<int64_t>(begin) * kShortChunk,
                               std::min(p.plane, static_cast<int64_t>(end) * kShortChunk));
  });
}

size_t packed_short_rows_floats(int64_t rows, int64_t depth) {
  return static_cast<size_t>((rows + kShortRows - 1) / kShortRows * kShortRows * depth);
}

// packed[block][k][r] = A(block * kShortRows + r, k), A(i, k) = a[i * row_stride + k * depth_stride].
// Each block is read along A's contiguous direction: rows of the forward's [O, C] weight, runs of
// six along the input gradient's transposed reading (a strided read cost MobileNetV2's step 2 ms).
void pack_short_rows(const float* a, int64_t row_stride, int64_t depth_stride, int64_t rows, int64_t depth, float* packed) {
  for (int64_t block = 0; block < rows; block += kShortRows, packed += depth * kShortRows) {
    const int64_t n = std::min(kShortRows, rows - block);
    if (n < kShortRows) std::fill(packed, packed + depth * kShortRows, 0.0f);
    if (depth_stride == 1) {
      for (int64_t r = 0; r < n; ++r) {
        const float* row = a + (block + r) * row_stride;
        for (int64_t k = 0; k < depth; ++k) packed[k * kShortRows + r] = row[k];
      }
    } else {
      for (int64_t k = 0; k < depth; ++k) {
        const float* run = a + k * depth_stride + block * row_stride;
        for (int64_t r = 0; r < n; ++r) packed[k * kShortRows + r] = run[r * row_stride];
      }
    }
  }
}


}  // namespace pock::cpu
