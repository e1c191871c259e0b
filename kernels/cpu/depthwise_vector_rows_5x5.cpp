#include "kernels/cpu/depthwise_vector_rows_5x5.hpp"

#include <algorithm>

#include "kernels/cpu/depthwise_vector_lanes.hpp"
#include "kernels/cpu/vec8.hpp"

namespace pock::cpu {
namespace {

#pragma GCC diagnostic ignored "-Wpsabi"  // the Vec8 helpers below are inlined (vec8.hpp)
using simd::clamp8;
using simd::lane_sum8;
using simd::load8;
using simd::splat8;
using simd::store8;
using simd::Vec8;
using namespace depthwise_lanes;

constexpr int kSize = 5, kCenter = 2;

struct Taps {
  Vec8 t[kSize * kSize];
  Vec8 bias, lo, hi;
};

// The five columns that the taps of one tap row read for output columns [x, x + 8), in the
// stride's lane order: column offsets e = kx - kPad from each output's own column (times the
// stride). The block at the row's start (kLeftEdge) or end (kRightEdge) takes the columns outside
// the row as zero lanes.
struct Window {
  Vec8 c[kSize];
};

template <int kStride, int kPad, bool kLeftEdge, bool kRightEdge>
POCK_SIMD_INLINE Window window_columns(const float* r, int64_t x) {
  Window w;
  if constexpr (kStride == 1) {
    const Vec8 mid = load8(r + x);
    w.c[0] = kLeftEdge ? shift_right<2>(mid) : load8(r + x - 2);
    w.c[1] = kLeftEdge ? shift_right<1>(mid) : load8(r + x - 1);
    w.c[2] = mid;
    w.c[3] = kRightEdge ? shift_left<1>(mid) : load8(r + x + 1);
    w.c[4] = kRightEdge ? shift_left<2>(mid) : load8(r + x + 2);
  } else {
    // Input columns 2o + e: the vectors from 2x + base (base = e rounded down to even) give
    // offset base in their even lanes and base + 1 in their odd lanes; three pairs cover e in
    // [-2, 3].
    const float* at = r + 2 * x;
    const Vec8 a = load8(at), b = load8(at + 8);
    const Vec8 before = kLeftEdge ? shift_right<2>(a) : load8(at - 2), before_hi = load8(at + 6);
    const Vec8 after = load8(at + 2), after_hi = kRightEdge ? shift_left<2>(b) : load8(at + 10);
    if constexpr (kPad == 2) {  // e = -2 .. 2
      w.c[0] = even_lanes(before, before_hi);
      w.c[1] = odd_lanes(before, before_hi);
      w.c[2] = even_lanes(a, b);
      w.c[3] = odd_lanes(a, b);
      w.c[4] = even_lanes(after, after_hi);
    } else {  // pad 1: e = -1 .. 3
      w.c[0] = odd_lanes(before, before_hi);
      w.c[1] = even_lanes(a, b);
      w.c[2] = odd_lanes(a, b);
      w.c[3] = even_lanes(after, after_hi);
      w.c[4] = odd_lanes(after, after_hi);
    }
  }
  return w;
}

// The input row under the center tap row of output row oy, and how many of the two rows above
// and below it exist.
struct RowWindow {
  int64_t middle;
  int up, down;
};
template <int kStride, int kPad>
POCK_SIMD_INLINE RowWindow row_window(int64_t oy, int64_t in_height) {
  const int64_t middle = kStride * oy - kPad + kCenter;
  return {middle, static_cast<int>(std::min<int64_t>(kCenter, middle)),
          static_cast<int>(std::min<int64_t>(kCenter, in_height - 1 - middle))};
}

// Runs ROW(up, down) with the row's counts of rows above and below its center row as constants,
// (2, 2) first: every row but the first and last two of a plane.
#define POCK_DEPTHWISE_5X5_ROWS(rows, ROW)     \
  do {                                         \
    switch ((rows).up * 3 + (rows).down) {     \
      case 8: ROW(2, 2); break;                \
      case 7: ROW(2, 1); break;                \
      case 6: ROW(2, 0); break;                \
      case 5: ROW(1, 2); break;                \
      case 4: ROW(1, 1); break;                \
      case 3: ROW(1, 0); break;                \
      case 2: ROW(0, 2); break;                \
      case 1: ROW(0, 1); break;                \
      default: ROW(0, 0); break;               \
    }                                          \
  } while (false)

// Output columns [col, col + 8) of one row: r points at the input row under the center tap row;
// kUp / kDown rows above / below it exist.
template <int kStride, int kPad, int kUp, int kDown, bool kLeftEdge, bool kRightEdge>
POCK_SIMD_INLINE void output_block(const float* r, int64_t in_width, const Taps& k, int64_t col, float* out) {
  Vec8 acc = Vec8{};
  for (int d = -kUp; d <= kDown; ++d) {
    const Window w = window_columns<kStride, kPad, kLeftEdge, kRightEdge>(r + d * in_width, col);
    const Vec8* t = k.t + (d + kCenter) * kSize;
    for (int kx = 0; kx < kSize; ++kx) acc += t[kx] * w.c[kx];
  }
  if constexpr (kStride == 2) acc = in_column_order(acc);
  store8(out + col, clamp8(k.bias + acc, k.lo, k.hi));
}

// The row's blocks (depthwise_vector_lanes.hpp), written out with the edges as template arguments.
// The same skeleton as depthwise_vector_rows.cpp's 3x3 rows, on purpose: one generic over the
// window size (or over a block functor) cost the 3x3 planes their register allocation, 10-20 %
// on 8x8 planes, measured.
template <int kStride, int kPad, int kUp, int kDown>
POCK_SIMD_INLINE void output_row(const float* r, int64_t in_width, int64_t width, const Taps& k, float* out) {
  if (width == 8) return output_block<kStride, kPad, kUp, kDown, true, true>(r, in_width, k, 0, out);
  output_block<kStride, kPad, kUp, kDown, true, false>(r, in_width, k, 0, out);
  const int64_t last = width - 8;
  for (int64_t x = 8; x < last; x += 8) output_block<kStride, kPad, kUp, kDown, false, false>(r, in_width, k, x, out);
  output_block<kStride, kPad, kUp, kDown, false, true>(r, in_width, k, last, out);
}

template <int kStride, int kPad>
POCK_SIMD_INLINE void output_plane(const float* x, const float* taps, float bias, Clamp c, float* y,
                                   int64_t in_height, int64_t height, int64_t width) {
  Taps k;  // splat in the clone: at the clone's width, in its registers where they fit
  for (int i = 0; i < kSize * kSize; ++i) k.t[i] = splat8(taps[i]);
  k.bias = splat8(bias);
  k.lo = splat8(c.lo);
  k.hi = splat8(c.hi);
  const int64_t in_width = kStride * width;
  for (int64_t oy = 0; oy < height; ++oy) {
    const RowWindow rows = row_window<kStride, kPad>(oy, in_height);
    const float* r = x + rows.middle * in_width;
    float* out = y + oy * width;
#define POCK_ROW(up, down) output_row<kStride, kPad, up, down>(r, in_width, width, k, out)
    POCK_DEPTHWISE_5X5_ROWS(rows, POCK_ROW);
#undef POCK_ROW
  }
}

// The weight gradient: tap (ky, kx) sums dy times the input pixel the tap read for it, over the
// forward's window reads, each tap's products in its own vector, summed across lanes once per
// plane. The lanes of dy that an overlapping last block has seen already are zeroed, by bits.
template <int kStride, int kPad, int kUp, int kDown, bool kLeftEdge, bool kRightEdge>
POCK_SIMD_INLINE void weight_block(const float* r, int64_t in_width, const float* d_row, int64_t col, Bits unseen,
                                   Vec8* acc) {
  Vec8 d = load8(d_row + col);
  if (kRightEdge && !kLeftEdge) d = keep_lanes(d, unseen);  // 8 wide: one block
  if constexpr (kStride == 2) d = in_column_order(d);
  for (int dy = -kUp; dy <= kDown; ++dy) {
    const Window w = window_columns<kStride, kPad, kLeftEdge, kRightEdge>(r + dy * in_width, col);
    Vec8* a = acc + (dy + kCenter) * kSize;
    for (int kx = 0; kx < kSize; ++kx) a[kx] += d * w.c[kx];
  }
}

template <int kStride, int kPad, int kUp, int kDown>
POCK_SIMD_INLINE void weight_row(const float* r, int64_t in_width, const float* d_row, int64_t width, Bits unseen,
                                 Vec8* acc) {
  if (width == 8) return weight_block<kStride, kPad, kUp, kDown, true, true>(r, in_width, d_row, 0, unseen, acc);
  weight_block<kStride, kPad, kUp, kDown, true, false>(r, in_width, d_row, 0, unseen, acc);
  const int64_t last = width - 8;
  for (int64_t x = 8; x < last; x += 8) {
    weight_block<kStride, kPad, kUp, kDown, false, false>(r, in_width, d_row, x, unseen, acc);
  }
  weight_block<kStride, kPad, kUp, kDown, false, true>(r, in_width, d_row, last, unseen, acc);
}

template <int kStride, int kPad>
POCK_SIMD_INLINE void weight_gradient(const float* x, const float* dy, double* sums, int64_t in_height,
                                      int64_t height, int64_t width) {
  const Bits unseen = unseen_lanes(width);
  const int64_t in_width = kStride * width;
  Vec8 acc[kSize * kSize] = {};
  for (int64_t oy = 0; oy < height; ++oy) {
    const RowWindow rows = row_window<kStride, kPad>(oy, in_height);
    const float* r = x + rows.middle * in_width;
    const float* d_row = dy + oy * width;
#define POCK_ROW(up, down) weight_row<kStride, kPad, up, down>(r, in_width, d_row, width, unseen, acc)
    POCK_DEPTHWISE_5X5_ROWS(rows, POCK_ROW);
#undef POCK_ROW
  }
  for (int t = 0; t < kSize * kSize; ++t) sums[t] += lane_sum8(acc[t]);
}

// The input gradient at stride 2, by the parities of dx's coordinates. With m = 2i + p, tap ky
// reads dy row i + (p + pad - ky) / 2 where p + pad - ky is even (three taps for one parity, two
// for the other), and the same along columns; so dx rows 2i and 2i + 1, at columns 2j + q, are
// sums of dy rows i - 1, i, i + 1 at columns j - 1, j, j + 1 (zero outside dy), each pair of
// column parities interleaved into 16 consecutive columns. The overlapping last block of a row
// writes the same values again.

template <int kPad, bool kLeftEdge, bool kRightEdge>
POCK_SIMD_INLINE void input_gradient_block(const float* const rows[3], const Vec8* t, int64_t j, float* dx_even,
                                           float* dx_odd) {
  Vec8 v[3][3];  // v[row - (i - 1)][column - (j - 1)]
  for (int r = 0; r < 3; ++r) {
    if (!rows[r]) {
      v[r][0] = v[r][1] = v[r][2] = Vec8{};
      continue;
    }
    const Vec8 cur = load8(rows[r] + j);
    v[r][0] = kLeftEdge ? shift_right<1>(cur) : load8(rows[r] + j - 1);
    v[r][1] = cur;
    v[r][2] = kRightEdge ? shift_left<1>(cur) : load8(rows[r] + j + 1);
  }
  Vec8 out[2][2];
  for (int p = 0; p < 2; ++p) {
    for (int q = 0; q < 2; ++q) {
      Vec8 acc = Vec8{};
      for (int ky = (p + kPad) % 2; ky < kSize; ky += 2) {
        for (int kx = (q + kPad) % 2; kx < kSize; kx += 2) {
          acc += t[ky * kSize + kx] * v[(p + kPad - ky) / 2 + 1][(q + kPad - kx) / 2 + 1];
        }
      }
      out[p][q] = acc;
    }
  }
  store_interleaved(dx_even + 2 * j, out[0][0], out[0][1]);
  store_interleaved(dx_odd + 2 * j, out[1][0], out[1][1]);
}

template <int kPad>
POCK_SIMD_INLINE void input_gradient_stride2(const float* dy, const float* taps, float* dx, int64_t height,
                                             int64_t width) {
  Vec8 t[kSize * kSize];
  for (int i = 0; i < kSize * kSize; ++i) t[i] = splat8(taps[i]);
  const int64_t in_width = 2 * width, last = width - 8;
  for (int64_t i = 0; i < height; ++i) {
    const float* row = dy + i * width;
    const float* const rows[3] = {i > 0 ? row - width : nullptr, row, i + 1 < height ? row + width : nullptr};
    float* dx_even = dx + 2 * i * in_width;
    float* dx_odd = dx_even + in_width;
    if (width == 8) {
      input_gradient_block<kPad, true, true>(rows, t, 0, dx_even, dx_odd);
      continue;
    }
    input_gradient_block<kPad, true, false>(rows, t, 0, dx_even, dx_odd);
    for (int64_t j = 8; j < last; j += 8) input_gradient_block<kPad, false, false>(rows, t, j, dx_even, dx_odd);
    input_gradient_block<kPad, false, true>(rows, t, last, dx_even, dx_odd);
  }
}

POCK_SIMD_CLONES void plane_stride1(const float* x, const float* taps, float bias, Clamp c, float* y, int64_t in_h,
                                    int64_t h, int64_t w) {
  output_plane<1, 2>(x, taps, bias, c, y, in_h, h, w);
}
POCK_SIMD_CLONES void plane_stride2_pad2(const float* x, const float* taps, float bias, Clamp c, float* y,
                                         int64_t in_h, int64_t h, int64_t w) {
  output_plane<2, 2>(x, taps, bias, c, y, in_h, h, w);
}
POCK_SIMD_CLONES void plane_stride2_pad1(const float* x, const float* taps, float bias, Clamp c, float* y,
                                         int64_t in_h, int64_t h, int64_t w) {
  output_plane<2, 1>(x, taps, bias, c, y, in_h, h, w);
}
POCK_SIMD_CLONES void weights_stride1(const float* x, const float* dy, double* sums, int64_t in_h, int64_t h,
                                      int64_t w) {
  weight_gradient<1, 2>(x, dy, sums, in_h, h, w);
}
POCK_SIMD_CLONES void weights_stride2_pad2(const float* x, const float* dy, double* sums, int64_t in_h, int64_t h,
                                           int64_t w) {
  weight_gradient<2, 2>(x, dy, sums, in_h, h, w);
}
POCK_SIMD_CLONES void weights_stride2_pad1(const float* x, const float* dy, double* sums, int64_t in_h, int64_t h,
                                           int64_t w) {
  weight_gradient<2, 1>(x, dy, sums, in_h, h, w);
}

POCK_SIMD_CLONES void input_gradient_stride2_pad2(const float* dy, const float* taps, float* dx, int64_t h,
                                                  int64_t w) {
  input_gradient_stride2<2>(dy, taps, dx, h, w);
}
POCK_SIMD_CLONES void input_gradient_stride2_pad1(const float* dy, const float* taps, float* dx, int64_t h,
                                                  int64_t w) {
  input_gradient_stride2<1>(dy, taps, dx, h, w);
}

}  // namespace

void depthwise_5x5_input_gradient_stride2_plane(const ConvGeometry& g, const float* dy, const float* w, float* dx) {
  if (g.pad_left == 2) return input_gradient_stride2_pad2(dy, w, dx, g.out_h, g.out_w);
  input_gradient_stride2_pad1(dy, w, dx, g.out_h, g.out_w);
}

void depthwise_5x5_plane(const ConvGeometry& g, const float* x, const float* taps, float bias, Clamp c, float* y) {
  if (g.stride_w == 1) return plane_stride1(x, taps, bias, c, y, g.in_h, g.out_h, g.out_w);
  if (g.pad_left == 2) return plane_stride2_pad2(x, taps, bias, c, y, g.in_h, g.out_h, g.out_w);
  plane_stride2_pad1(x, taps, bias, c, y, g.in_h, g.out_h, g.out_w);
}

void depthwise_5x5_weight_gradient_plane(const ConvGeometry& g, const float* x, const float* dy, double* sums) {
  if (g.stride_w == 1) return weights_stride1(x, dy, sums, g.in_h, g.out_h, g.out_w);
  if (g.pad_left == 2) return weights_stride2_pad2(x, dy, sums, g.in_h, g.out_h, g.out_w);
  weights_stride2_pad1(x, dy, sums, g.in_h, g.out_h, g.out_w);
}

}  // namespace pock::cpu
