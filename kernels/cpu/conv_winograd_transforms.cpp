#include "kernels/cpu/conv_winograd_transforms.hpp"

#include <algorithm>
#include <type_traits>
#include <utility>

#include "kernels/cpu/simd.hpp"

// The loops' iterations are independent (outputs never overlap inputs). Not unrolled either: GCC
// unrolls a loop of 16 iterations completely and then vectorizes only parts of its body, and the
// tiles' strided loads became scalar code.
#if defined(__clang__)
#define POCK_WINOGRAD_IVDEP _Pragma("clang loop vectorize(assume_safety) unroll(disable)")
#else
#define POCK_WINOGRAD_IVDEP _Pragma("GCC ivdep") _Pragma("GCC unroll 1")
#endif

namespace pock::cpu::winograd {
namespace {

// f(0), f(1), ..., f(N - 1) with each index a compile-time constant: GCC vectorizes the loops
// below only when no loop or call is left inside their bodies and the small structs indexed by
// constants become registers. The loops carry `ivdep` (POCK_WINOGRAD_IVDEP), not `omp simd` as the backend's other
// loops do: GCC 12 turns a struct declared in an `omp simd` body into a per-lane array in memory,
// and then vectorizes none of these loops.
template <int N, typename F>
POCK_SIMD_INLINE void unroll(F&& f) {
  [&]<int... I>(std::integer_sequence<int, I...>) __attribute__((always_inline)) {
    (f(std::integral_constant<int, I>{}), ...);
  }(std::make_integer_sequence<int, N>{});
}

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

}  // namespace

// The kernel's taps are read with a run-time stride even where it is 9: GCC vectorizes a
// constant stride of 9 (an interleaved group of 9) not at all, a variable one by gathers.
POCK_SIMD_CLONES void weight_row(const float* w, int64_t r, int64_t rows, int64_t cols, bool rotate, float* u) {
  const int64_t plane = rows * cols;
  const float* base = w + r * cols * 9 + (rotate ? 8 : 0);
  const int64_t stride = 9, step = rotate ? -1 : 1;
  float* out = u + r * cols;
  POCK_WINOGRAD_IVDEP
  for (int64_t c = 0; c < cols; ++c) {
    const float* k = base + c * stride;
    // G g: the kernel's three columns, each to six rows; then each row times G^T.
    const Six c0 = g_times(k[0], k[3 * step], k[6 * step]), c1 = g_times(k[step], k[4 * step], k[7 * step]),
              c2 = g_times(k[2 * step], k[5 * step], k[8 * step]);
    unroll<6>([&](auto i) __attribute__((always_inline)) {
      const Six row = g_times(c0.e[i], c1.e[i], c2.e[i]);
      unroll<6>([&](auto j) { out[(i * 6 + j) * plane + c] = row.e[j]; });
    });
  }
}

// Both row transforms compute all kTilesPerCall lanes whatever `count` is, on buffers of their
// own: a loop of a constant 16 iterations becomes one AVX-512 instruction per step, where a loop
// of `count` (2 to 8 tiles per row on ResNet-18's planes) ran as the vectorizer's scalar epilogue.
// For the same reason they read and write whole 16-lane rows of V and M (the header says what the
// caller leaves room for): copies of `count` floats became memmove calls or scalar code, a
// quarter of the time of ResNet-18's 64-channel layer.
POCK_SIMD_CLONES void input_tiles(const InputTiles& in, float* v, int64_t v_stride) {
  // Columns of one spare tile past the last, zero: the last tile reads two of them.
  constexpr int64_t kPhaseLength = kTilesPerCall + 1, kWidth = kPhaseLength * kTile;
  // The six input rows the tiles read, zero-padded, then B^T applied down their columns, stored by
  // column phase: phases[k][q][t] is transformed row k at column 4 t + q, so that the loads of
  // the pass along the rows are unit-stride (a tile's six columns 4 t .. 4 t + 5 are phases
  // 0..3 at t and phases 0, 1 at t + 1).
  float rows[kInputTile][kWidth];
  float phases[kInputTile][kTile][kPhaseLength];
  float tiles[kElements][kTilesPerCall];
  const int64_t width = in.count * kTile + 2;
  const int64_t x0 = in.tx0 * kTile - in.pad_left;
  const int64_t lo = std::clamp<int64_t>(-x0, 0, width), hi = std::clamp<int64_t>(in.w - x0, lo, width);
  for (int64_t r = 0; r < kInputTile; ++r) {
    const int64_t iy = in.ty * kTile - in.pad_top + r;
    const bool inside = iy >= 0 && iy < in.h;
    const float* src = in.x + (inside ? iy : 0) * in.w + x0;
    const int64_t begin = inside ? lo : 0, end = inside ? hi : 0;
    float* row = rows[r];
    POCK_WINOGRAD_IVDEP
    for (int64_t i = 0; i < kWidth; ++i) row[i] = i >= begin && i < end ? src[i] : 0.0f;
  }
  for (int64_t q = 0; q < kTile; ++q) {
    POCK_WINOGRAD_IVDEP
    for (int64_t t = 0; t < kPhaseLength; ++t) {
      const int64_t i = t * kTile + q;
      const Six s = bt_times(rows[0][i], rows[1][i], rows[2][i], rows[3][i], rows[4][i], rows[5][i]);
      unroll<6>([&](auto k) { phases[k][q][t] = s.e[k]; });
    }
  }
  // B applied along each transformed row, one tile per lane.
  for (int k = 0; k < 6; ++k) {
    const float(*p)[kPhaseLength] = phases[k];
    POCK_WINOGRAD_IVDEP
    for (int64_t t = 0; t < kTilesPerCall; ++t) {
      const Six s = bt_times(p[0][t], p[1][t], p[2][t], p[3][t], p[0][t + 1], p[1][t + 1]);
      unroll<6>([&](auto j) { tiles[k * 6 + j][t] = s.e[j]; });
    }
  }
  for (int64_t xi = 0; xi < kElements; ++xi) {
    float* dst = v + xi * v_stride;
    POCK_WINOGRAD_IVDEP
    for (int64_t t = 0; t < kTilesPerCall; ++t) dst[t] = tiles[xi][t];
  }
}

POCK_SIMD_CLONES void output_tiles(const float* m, int64_t m_stride, const OutputTiles& out) {
  constexpr int64_t kWidth = kTilesPerCall * kTile;
  // A^T along each of M's six rows (per tile), then down the columns into four output rows.
  float tiles[kElements][kTilesPerCall];
  float half[kInputTile][kTile][kTilesPerCall];
  float rows[kTile][kWidth];
  for (int64_t xi = 0; xi < kElements; ++xi) {
    const float* src = m + xi * m_stride;
    POCK_WINOGRAD_IVDEP
    for (int64_t t = 0; t < kTilesPerCall; ++t) tiles[xi][t] = src[t];
  }
  for (int k = 0; k < 6; ++k) {
    const float(*mk)[kTilesPerCall] = tiles + k * 6;
    POCK_WINOGRAD_IVDEP
    for (int64_t t = 0; t < kTilesPerCall; ++t) {
      const Four s = at_times(mk[0][t], mk[1][t], mk[2][t], mk[3][t], mk[4][t], mk[5][t]);
      unroll<4>([&](auto b) { half[k][b][t] = s.e[b]; });
    }
  }
  // All four columns of a tile in one iteration: each output row's stores then form whole groups
  // of four, which vectorize (one column per loop left gaps, and scalar stores).
  POCK_WINOGRAD_IVDEP
  for (int64_t t = 0; t < kTilesPerCall; ++t) {
    unroll<4>([&](auto b) __attribute__((always_inline)) {
      const Four y = at_times(half[0][b][t], half[1][b][t], half[2][b][t], half[3][b][t], half[4][b][t], half[5][b][t]);
      unroll<4>([&](auto a) { rows[a][t * kTile + b] = y.e[a]; });
    });
  }
  // Ragged tiles: rows and columns past the plane are dropped. Two selects keep NaN (clamp_of).
  const int64_t x0 = out.tx0 * kTile;
  const int64_t n = std::min(out.count * kTile, out.out_w - x0);
  for (int64_t a = 0; a < kTile && out.ty * kTile + a < out.out_h; ++a) {
    float* dst = out.y + (out.ty * kTile + a) * out.out_w + x0;
    const float* src = rows[a];
    const float bias = out.bias, lo = out.clamp.lo, hi = out.clamp.hi;
    POCK_WINOGRAD_IVDEP
    for (int64_t i = 0; i < n; ++i) {
      float y = src[i] + bias;
      y = y < lo ? lo : y;
      dst[i] = y > hi ? hi : y;
    }
  }
}

}  // namespace pock::cpu::winograd
