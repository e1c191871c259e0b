#include "kernels/cpu/conv_winograd_transforms.hpp"

#include <algorithm>

#include "kernels/cpu/simd.hpp"

namespace pock::cpu::winograd {
namespace {

struct Six {
  float e[6];
};
struct Four {
  float e[4];
};

// The matrices for the points 0, -1, 1, 1/2, -2 and infinity (Cook-Toom, as Lavin builds them).
// Lavin's points 0, +-1, +-2 put 2^3 = 8 and 4^2 = 16 into the transforms on both sides of the
// sums over channels; 1/2 in place of 2 halves the largest intermediates, and in an f32 simulation
// of ResNet-18's 256-channel layer (32768 outputs, values in [-1, 1)) the worst error relative to
// |exact| + 1 fell from 3.8e-4 to 1.4e-4. Barabasz et al., "Error analysis and improving the
// accuracy of Winograd convolution for deep neural networks" (2020), found the same points best.

// G (a, b, c)^T: the kernel's column (or row) evaluated at the points, divided by the product of
// the point's distances to the others.
POCK_SIMD_INLINE Six g_times(float a, float b, float c) {
  constexpr float kThird = 1.0f / 3.0f, kFifteenth = 1.0f / 15.0f;
  return {{a, (b - a - c) * kThird, (a + b + c) * kThird, -(16.0f * a + 8.0f * b + 4.0f * c) * kFifteenth,
           (a - 2.0f * b + 4.0f * c) * kFifteenth, c}};
}

// B^T (d0 .. d5)^T.
POCK_SIMD_INLINE Six bt_times(float d0, float d1, float d2, float d3, float d4, float d5) {
  return {{d0 - 1.5f * d1 - 2.0f * d2 + 1.5f * d3 + d4, d1 - 2.5f * d2 + 0.5f * d3 + d4,
           0.5f * d2 - d1 + 2.5f * d3 + d4, 2.0f * (d3 - d1) - d2 + d4, 0.5f * (d1 - d3) - d2 + d4,
           d1 - 1.5f * d2 - 2.0f * d3 + 1.5f * d4 + d5}};
}

// A^T (m0 .. m5)^T: the products' polynomial read back at the points' powers 0 .. 3.
POCK_SIMD_INLINE Four at_times(float m0, float m1, float m2, float m3, float m4, float m5) {
  const float p12 = m1 + m2, n12 = m2 - m1;
  return {{m0 + p12 + m3 + m4, n12 + 0.5f * m3 - 2.0f * m4, p12 + 0.25f * m3 + 4.0f * m4,
           n12 + 0.125f * m3 - 8.0f * m4 + m5}};
}

// Tap t of kernel (r, c): in place, or rotated with its channel axes swapped (weight_row).
template <bool kRotateSwap>
POCK_SIMD_INLINE void weight_row_loop(const float* w, int64_t r, int64_t rows, int64_t cols, float* u) {
  const int64_t plane = rows * cols;
  const float* base = kRotateSwap ? w + r * 9 : w + r * cols * 9;
  const int64_t stride = kRotateSwap ? rows * 9 : 9;
  float* out = u + r * cols;
#pragma omp simd
  for (int64_t c = 0; c < cols; ++c) {
    const float* k = base + c * stride;
    const auto tap = [k](int64_t i) { return kRotateSwap ? k[8 - i] : k[i]; };
    // G g: the kernel's three columns, each to six rows; then each row times G^T.
    const Six c0 = g_times(tap(0), tap(3), tap(6)), c1 = g_times(tap(1), tap(4), tap(7)),
              c2 = g_times(tap(2), tap(5), tap(8));
    for (int i = 0; i < 6; ++i) {
      const Six row = g_times(c0.e[i], c1.e[i], c2.e[i]);
      for (int j = 0; j < 6; ++j) out[(i * 6 + j) * plane + c] = row.e[j];
    }
  }
}

}  // namespace

POCK_SIMD_CLONES void weight_row(const float* w, int64_t r, int64_t rows, int64_t cols, bool rotate_swap, float* u) {
  if (rotate_swap) {
    weight_row_loop<true>(w, r, rows, cols, u);
  } else {
    weight_row_loop<false>(w, r, rows, cols, u);
  }
}

POCK_SIMD_CLONES void input_tiles(const InputTiles& in, float* v, int64_t v_stride) {
  constexpr int64_t kWidth = kTilesPerCall * kTile + 2;
  // The six input rows the tiles read, zero-padded, then B^T applied down their columns.
  float rows[kInputTile][kWidth];
  float cols[kInputTile][kWidth];
  const int64_t width = in.count * kTile + 2;
  const int64_t x0 = in.tx0 * kTile - in.pad_left;
  const int64_t lo = std::clamp<int64_t>(-x0, 0, width), hi = std::clamp<int64_t>(in.w - x0, 0, width);
  for (int64_t r = 0; r < kInputTile; ++r) {
    const int64_t iy = in.ty * kTile - in.pad_top + r;
    float* row = rows[r];
    if (iy < 0 || iy >= in.h) {
      std::fill(row, row + width, 0.0f);
      continue;
    }
    const float* src = in.x + iy * in.w + x0;
    std::fill(row, row + lo, 0.0f);
    std::copy(src + lo, src + hi, row + lo);
    std::fill(row + std::max(lo, hi), row + width, 0.0f);
  }
#pragma omp simd
  for (int64_t i = 0; i < width; ++i) {
    const Six s = bt_times(rows[0][i], rows[1][i], rows[2][i], rows[3][i], rows[4][i], rows[5][i]);
    for (int k = 0; k < 6; ++k) cols[k][i] = s.e[k];
  }
  // B applied along each transformed row, one tile per lane.
  for (int k = 0; k < 6; ++k) {
    const float* c = cols[k];
    float* out = v + k * 6 * v_stride;
#pragma omp simd
    for (int64_t t = 0; t < in.count; ++t) {
      const float* d = c + t * kTile;
      const Six s = bt_times(d[0], d[1], d[2], d[3], d[4], d[5]);
      for (int j = 0; j < 6; ++j) out[j * v_stride + t] = s.e[j];
    }
  }
}

POCK_SIMD_CLONES void output_tiles(const float* m, int64_t m_stride, const OutputTiles& out) {
  constexpr int64_t kWidth = kTilesPerCall * kTile;
  // A^T along each of M's six rows (per tile), then down the columns into four output rows.
  float half[kInputTile][kTile][kTilesPerCall];
  float rows[kTile][kWidth];
  for (int k = 0; k < 6; ++k) {
    const float* mk = m + k * 6 * m_stride;
#pragma omp simd
    for (int64_t t = 0; t < out.count; ++t) {
      const Four s = at_times(mk[t], mk[m_stride + t], mk[2 * m_stride + t], mk[3 * m_stride + t],
                              mk[4 * m_stride + t], mk[5 * m_stride + t]);
      for (int b = 0; b < 4; ++b) half[k][b][t] = s.e[b];
    }
  }
  for (int b = 0; b < 4; ++b) {
#pragma omp simd
    for (int64_t t = 0; t < out.count; ++t) {
      const Four y = at_times(half[0][b][t], half[1][b][t], half[2][b][t], half[3][b][t], half[4][b][t], half[5][b][t]);
      for (int a = 0; a < 4; ++a) rows[a][t * kTile + b] = y.e[a];
    }
  }
  // Ragged tiles: rows and columns past the plane are dropped. Two selects keep NaN (clamp_of).
  const int64_t x0 = out.tx0 * kTile;
  const int64_t n = std::min(out.count * kTile, out.out_w - x0);
  for (int64_t a = 0; a < kTile && out.ty * kTile + a < out.out_h; ++a) {
    float* dst = out.y + (out.ty * kTile + a) * out.out_w + x0;
    const float* src = rows[a];
    const float bias = out.bias, lo = out.clamp.lo, hi = out.clamp.hi;
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) {
      float y = src[i] + bias;
      y = y < lo ? lo : y;
      dst[i] = y > hi ? hi : y;
    }
  }
}

}  // namespace pock::cpu::winograd
