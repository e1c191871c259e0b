#include "kernels/cpu/short_product.hpp"

#include <algorithm>

#include "kernels/cpu/vec8.hpp"

namespace pock::cpu {
namespace {

#pragma GCC diagnostic ignored "-Wpsabi"  // the Vec helpers below are inlined (vec8.hpp)
using Vec = simd::Vec8;
using simd::load8;
using simd::store8;

POCK_SIMD_INLINE Vec splat(float f) { return Vec{} + f; }

// NaN passes both selects, as through the activation kernels.
POCK_SIMD_INLINE Vec clamp(Vec v, Vec lo, Vec hi) {
  v = v < lo ? lo : v;
  return v > hi ? hi : v;
}


template <int R>
POCK_SIMD_INLINE void tile(const ShortProduct& p, const float* w, int64_t row, int64_t px) {
  Vec acc[R][2];
#pragma GCC unroll 6
  for (int r = 0; r < R; ++r) acc[r][0] = acc[r][1] = splat(p.bias ? p.bias[row + r] : 0.0f);
  const float* x = p.in + px;
  const int64_t rs = p.row_stride;
  for (int64_t k = 0; k < p.depth; ++k, x += p.plane, w += p.depth_stride) {
    const Vec x0 = load8(x), x1 = load8(x + 8);
#pragma GCC unroll 6
    for (int r = 0; r < R; ++r) {
      acc[r][0] += w[r * rs] * x0;
      acc[r][1] += w[r * rs] * x1;
    }
  }
  const Vec lo = splat(p.lo), hi = splat(p.hi);
#pragma GCC unroll 6
  for (int r = 0; r < R; ++r) {
    float* y = p.out + (row + r) * p.plane + px;
    store8(y, clamp(acc[r][0], lo, hi));
    store8(y + 8, clamp(acc[r][1], lo, hi));
  }
}

// The pixels past the last whole tile of a row block, one at a time.
POCK_SIMD_INLINE void ragged_pixels(const ShortProduct& p, const float* w, int64_t row, int64_t rows, int64_t begin,
                                    int64_t end) {
  for (int64_t r = 0; r < rows; ++r) {
    const float b = p.bias ? p.bias[row + r] : 0.0f;
    for (int64_t px = begin; px < end; ++px) {
      float s = b;
      for (int64_t k = 0; k < p.depth; ++k) s += w[r * p.row_stride + k * p.depth_stride] * p.in[k * p.plane + px];
      s = s < p.lo ? p.lo : s;
      p.out[(row + r) * p.plane + px] = s > p.hi ? p.hi : s;
    }
  }
}

POCK_SIMD_CLONES void short_product_columns_impl(const ShortProduct& p, int64_t begin, int64_t end) {
  for (int64_t row = 0; row < p.rows; row += kShortRows) {
    const int64_t rows = std::min(kShortRows, p.rows - row);
    const float* w = p.a + (row / kShortRows) * p.block_stride;
    int64_t px = begin;
    for (; px + kShortPixels <= end; px += kShortPixels) {
      switch (rows) {
        case 6: tile<6>(p, w, row, px); break;
        case 5: tile<5>(p, w, row, px); break;
        case 4: tile<4>(p, w, row, px); break;
        case 3: tile<3>(p, w, row, px); break;
        case 2: tile<2>(p, w, row, px); break;
        default: tile<1>(p, w, row, px); break;
      }
    }
    if (px < end) ragged_pixels(p, w, row, rows, px, end);
  }
}

}  // namespace

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
