#include "kernels/cpu/depthwise_vector_rows.hpp"

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

struct Taps {
  Vec8 t[9];
  Vec8 bias, lo, hi;
};

// {before, v0, ..., v6} and {v1, ..., v7, after}: a row's vector one column to the left or right.
POCK_SIMD_INLINE Vec8 shift_right(Vec8 v, float before) {
  return __builtin_shufflevector(v, splat8(before), 8, 0, 1, 2, 3, 4, 5, 6);
}
POCK_SIMD_INLINE Vec8 shift_left(Vec8 v, float after) {
  return __builtin_shufflevector(v, splat8(after), 1, 2, 3, 4, 5, 6, 7, 8);
}

// Tap row ky's contribution to output columns [x, x + 8) at stride 1: columns x - 1 and x + 8 of
// the input row r, zero where they lie outside it.
template <bool kLeftEdge, bool kRightEdge>
POCK_SIMD_INLINE Vec8 taps_stride1(const float* r, const Vec8* t, int64_t x) {
  const Vec8 mid = load8(r + x);
  const Vec8 left = kLeftEdge ? shift_right(mid, 0.0f) : load8(r + x - 1);
  const Vec8 right = kRightEdge ? shift_left(mid, 0.0f) : load8(r + x + 1);
  return t[0] * left + t[1] * mid + t[2] * right;
}

// Output columns [x, x + 8) from the input rows above, at and below the output row (r points at the
// one at it); kAbove / kBelow: whether that row exists.
template <bool kAbove, bool kBelow, bool kLeftEdge, bool kRightEdge>
POCK_SIMD_INLINE void block_stride1(const float* r, int64_t width, const Taps& k, int64_t x, float* y) {
  Vec8 acc = k.bias + taps_stride1<kLeftEdge, kRightEdge>(r, k.t + 3, x);
  if (kAbove) acc += taps_stride1<kLeftEdge, kRightEdge>(r - width, k.t, x);
  if (kBelow) acc += taps_stride1<kLeftEdge, kRightEdge>(r + width, k.t + 6, x);
  store8(y + x, clamp8(acc, k.lo, k.hi));
}

template <bool kAbove, bool kBelow>
POCK_SIMD_INLINE void row_stride1(const float* r, int64_t width, const Taps& k, float* y) {
  if (width == 8) return block_stride1<kAbove, kBelow, true, true>(r, width, k, 0, y);
  block_stride1<kAbove, kBelow, true, false>(r, width, k, 0, y);
  int64_t x = 8;
  for (; x + 8 < width; x += 8) block_stride1<kAbove, kBelow, false, false>(r, width, k, x, y);
  block_stride1<kAbove, kBelow, false, true>(r, width, k, x, y);
}

// At stride 2 output column o reads input columns 2o - 1, 2o and 2o + 1. From the input vectors
// a = columns [2x, 2x + 8) and b = [2x + 8, 2x + 16), one in-lane shuffle (vshufps) picks the even
// columns in the order of outputs {0, 1, 4, 5, 2, 3, 6, 7} of the block, and the same shuffle of
// the vectors one column earlier gives the odd columns 2o - 1 in that order: every tap row works in
// that order, and the block's sum is put back in column order once, before it is stored.
POCK_SIMD_INLINE Vec8 even_lanes(Vec8 a, Vec8 b) { return __builtin_shufflevector(a, b, 0, 2, 8, 10, 4, 6, 12, 14); }
POCK_SIMD_INLINE Vec8 odd_lanes(Vec8 a, Vec8 b) { return __builtin_shufflevector(a, b, 1, 3, 9, 11, 5, 7, 13, 15); }
POCK_SIMD_INLINE Vec8 in_column_order(Vec8 v) { return __builtin_shufflevector(v, v, 0, 1, 4, 5, 2, 3, 6, 7); }

// Tap row ky's contribution to output columns [x, x + 8), in the order above; at the row's start
// (kLeftEdge) column -1 is zero.
template <bool kLeftEdge>
POCK_SIMD_INLINE Vec8 taps_stride2(const float* r, const Vec8* t, int64_t x) {
  const float* at = r + 2 * x;
  const Vec8 a = load8(at), b = load8(at + 8);
  const Vec8 a_before = kLeftEdge ? shift_right(a, 0.0f) : load8(at - 1), b_before = load8(at + 7);
  return t[0] * even_lanes(a_before, b_before) + t[1] * even_lanes(a, b) + t[2] * odd_lanes(a, b);
}

template <bool kAbove, bool kBelow, bool kLeftEdge>
POCK_SIMD_INLINE void block_stride2(const float* r, int64_t in_width, const Taps& k, int64_t x, float* y) {
  Vec8 acc = taps_stride2<kLeftEdge>(r, k.t + 3, x);
  if (kAbove) acc += taps_stride2<kLeftEdge>(r - in_width, k.t, x);
  if (kBelow) acc += taps_stride2<kLeftEdge>(r + in_width, k.t + 6, x);
  store8(y + x, clamp8(k.bias + in_column_order(acc), k.lo, k.hi));
}

// Output row from input rows 2 oy - 1, 2 oy, 2 oy + 1 (r points at 2 oy, in_width floats a row).
template <bool kAbove, bool kBelow>
POCK_SIMD_INLINE void row_stride2(const float* r, int64_t in_width, int64_t width, const Taps& k, float* y) {
  block_stride2<kAbove, kBelow, true>(r, in_width, k, 0, y);
  for (int64_t x = 8; x < width; x += 8) block_stride2<kAbove, kBelow, false>(r, in_width, k, x, y);
}

POCK_SIMD_CLONES void plane_stride1(const float* x, const float* taps, float bias, Clamp c, float* y, int64_t height,
                                    int64_t width) {
  Taps k;
  for (int i = 0; i < 9; ++i) k.t[i] = splat8(taps[i]);
  k.bias = splat8(bias);
  k.lo = splat8(c.lo);
  k.hi = splat8(c.hi);
  if (height == 1) return row_stride1<false, false>(x, width, k, y);
  row_stride1<false, true>(x, width, k, y);
  for (int64_t oy = 1; oy + 1 < height; ++oy) row_stride1<true, true>(x + oy * width, width, k, y + oy * width);
  row_stride1<true, false>(x + (height - 1) * width, width, k, y + (height - 1) * width);
}

POCK_SIMD_CLONES void plane_stride2(const float* x, const float* taps, float bias, Clamp c, float* y, int64_t in_height,
                                    int64_t height, int64_t width) {
  Taps k;
  for (int i = 0; i < 9; ++i) k.t[i] = splat8(taps[i]);
  k.bias = splat8(bias);
  k.lo = splat8(c.lo);
  k.hi = splat8(c.hi);
  const int64_t in_width = 2 * width;
  for (int64_t oy = 0; oy < height; ++oy) {
    const float* r = x + 2 * oy * in_width;
    float* out = y + oy * width;
    const bool above = oy > 0, below = 2 * oy + 1 < in_height;
    if (above && below) {
      row_stride2<true, true>(r, in_width, width, k, out);
    } else if (below) {
      row_stride2<false, true>(r, in_width, width, k, out);
    } else if (above) {
      row_stride2<true, false>(r, in_width, width, k, out);
    } else {
      row_stride2<false, false>(r, in_width, width, k, out);
    }
  }
}

// The input gradient at stride 2 (pad 1 on top and left), by the parity of dx's coordinates: with
// a = dy[i][j..j+8), a1 = dy[i][j+1..j+9) (zero past the row), b and b1 the same of row i + 1
// (zero past the plane), and w the taps,
//   dx[2i][2j]       = w11 a
//   dx[2i][2j+1]     = w10 a1 + w12 a
//   dx[2i+1][2j]     = w01 b + w21 a
//   dx[2i+1][2j+1]   = w00 b1 + w02 b + w20 a1 + w22 a
// and each pair of parities is interleaved into 16 consecutive columns.
POCK_SIMD_INLINE void store_interleaved(float* to, Vec8 even, Vec8 odd) {
  store8(to, __builtin_shufflevector(even, odd, 0, 8, 1, 9, 2, 10, 3, 11));
  store8(to + 8, __builtin_shufflevector(even, odd, 4, 12, 5, 13, 6, 14, 7, 15));
}

// The dy row pair's vectors at columns [j, j + 8) and one column on.
template <bool kRightEdge>
POCK_SIMD_INLINE void gradient_block(const float* a_row, const float* b_row, const Vec8* t, int64_t j, float* dx_even,
                                     float* dx_odd) {
  const Vec8 a = load8(a_row + j), a1 = kRightEdge ? shift_left(a, 0.0f) : load8(a_row + j + 1);
  store_interleaved(dx_even + 2 * j, t[4] * a, t[3] * a1 + t[5] * a);
  if (!dx_odd) return;
  const Vec8 b = b_row ? load8(b_row + j) : Vec8{};
  const Vec8 b1 = !b_row ? Vec8{} : kRightEdge ? shift_left(b, 0.0f) : load8(b_row + j + 1);
  store_interleaved(dx_odd + 2 * j, t[1] * b + t[7] * a, t[0] * b1 + t[2] * b + t[6] * a1 + t[8] * a);
}

POCK_SIMD_CLONES void input_gradient_stride2(const float* dy, const float* taps, float* dx, int64_t height,
                                             int64_t width, int64_t in_height) {
  Vec8 t[9];
  for (int i = 0; i < 9; ++i) t[i] = splat8(taps[i]);
  const int64_t in_width = 2 * width;
  for (int64_t i = 0; i < height; ++i) {
    const float* a_row = dy + i * width;
    const float* b_row = i + 1 < height ? a_row + width : nullptr;
    float* dx_even = dx + 2 * i * in_width;
    float* dx_odd = 2 * i + 1 < in_height ? dx_even + in_width : nullptr;
    int64_t j = 0;
    for (; j + 8 < width; j += 8) gradient_block<false>(a_row, b_row, t, j, dx_even, dx_odd);
    gradient_block<true>(a_row, b_row, t, j, dx_even, dx_odd);
  }
}

// The weight gradient: tap (ky, kx) sums dy times the input pixel the tap read for it, the same
// window reads as the forward's, each tap's products kept in its own vector and summed across
// lanes once per plane (added to the double sums).
template <bool kLeftEdge, bool kRightEdge>
POCK_SIMD_INLINE void accumulate_stride1(const float* r, Vec8 d, Vec8* acc, int64_t x) {
  const Vec8 mid = load8(r + x);
  acc[0] += d * (kLeftEdge ? shift_right(mid, 0.0f) : load8(r + x - 1));
  acc[1] += d * mid;
  acc[2] += d * (kRightEdge ? shift_left(mid, 0.0f) : load8(r + x + 1));
}

template <bool kLeftEdge, bool kRightEdge>
POCK_SIMD_INLINE void weight_block_stride1(const float* x, const float* dy, Vec8* acc, int64_t oy, int64_t height,
                                           int64_t width, int64_t col) {
  const Vec8 d = load8(dy + oy * width + col);
  if (oy > 0) accumulate_stride1<kLeftEdge, kRightEdge>(x + (oy - 1) * width, d, acc, col);
  accumulate_stride1<kLeftEdge, kRightEdge>(x + oy * width, d, acc + 3, col);
  if (oy + 1 < height) accumulate_stride1<kLeftEdge, kRightEdge>(x + (oy + 1) * width, d, acc + 6, col);
}

POCK_SIMD_CLONES void weight_gradient_stride1(const float* x, const float* dy, double* sums, int64_t height,
                                              int64_t width) {
  Vec8 acc[9] = {};
  for (int64_t oy = 0; oy < height; ++oy) {
    if (width == 8) {
      weight_block_stride1<true, true>(x, dy, acc, oy, height, width, 0);
      continue;
    }
    weight_block_stride1<true, false>(x, dy, acc, oy, height, width, 0);
    int64_t col = 8;
    for (; col + 8 < width; col += 8) weight_block_stride1<false, false>(x, dy, acc, oy, height, width, col);
    weight_block_stride1<false, true>(x, dy, acc, oy, height, width, col);
  }
  for (int t = 0; t < 9; ++t) sums[t] += lane_sum8(acc[t]);
}

// Stride 2: dy's block is put in the lane order of even_lanes, in which the input columns come.
template <bool kLeftEdge>
POCK_SIMD_INLINE void accumulate_stride2(const float* r, Vec8 d, Vec8* acc, int64_t col) {
  const float* at = r + 2 * col;
  const Vec8 a = load8(at), b = load8(at + 8);
  const Vec8 a_before = kLeftEdge ? shift_right(a, 0.0f) : load8(at - 1), b_before = load8(at + 7);
  acc[0] += d * even_lanes(a_before, b_before);
  acc[1] += d * even_lanes(a, b);
  acc[2] += d * odd_lanes(a, b);
}

template <bool kLeftEdge>
POCK_SIMD_INLINE void weight_block_stride2(const float* x, const float* dy, Vec8* acc, int64_t oy, int64_t in_height,
                                           int64_t width, int64_t col) {
  const int64_t in_width = 2 * width;
  const Vec8 d = in_column_order(load8(dy + oy * width + col));  // the order is its own inverse
  if (oy > 0) accumulate_stride2<kLeftEdge>(x + (2 * oy - 1) * in_width, d, acc, col);
  accumulate_stride2<kLeftEdge>(x + 2 * oy * in_width, d, acc + 3, col);
  if (2 * oy + 1 < in_height) accumulate_stride2<kLeftEdge>(x + (2 * oy + 1) * in_width, d, acc + 6, col);
}

POCK_SIMD_CLONES void weight_gradient_stride2(const float* x, const float* dy, double* sums, int64_t in_height,
                                              int64_t height, int64_t width) {
  Vec8 acc[9] = {};
  for (int64_t oy = 0; oy < height; ++oy) {
    weight_block_stride2<true>(x, dy, acc, oy, in_height, width, 0);
    for (int64_t col = 8; col < width; col += 8) weight_block_stride2<false>(x, dy, acc, oy, in_height, width, col);
  }
  for (int t = 0; t < 9; ++t) sums[t] += lane_sum8(acc[t]);
}

}  // namespace

bool depthwise_vector_rows_take(const ConvGeometry& g) {
  const int64_t s = g.stride_w;
  if (g.kernel_h != 3 || g.kernel_w != 3 || g.dilation_h != 1 || g.dilation_w != 1 || (s != 1 && s != 2) ||
      g.stride_h != s || g.pad_top != 1 || g.pad_left != 1 || g.out_w <= 0 || g.out_w % 8 != 0 ||
      g.in_w != s * g.out_w || g.out_h <= 0) {
    return false;
  }
  // Stride 1: the last output row is the last input row's (the row below it is padding). Stride
  // 2: every output row's middle input row exists; the one below may not.
  return s == 1 ? g.in_h == g.out_h : 2 * (g.out_h - 1) < g.in_h;
}

bool depthwise_vector_rows_take_input_gradient(const ConvGeometry& g) {
  if (g.out_per_group() != 1 || !depthwise_vector_rows_take(g)) return false;
  // Stride 2: every dx row is one of the two that a dy row's pair of parities writes.
  return g.stride_h == 1 || g.in_h == 2 * g.out_h || g.in_h == 2 * g.out_h - 1;
}

void depthwise_vector_weight_gradient_plane(const ConvGeometry& g, const float* x, const float* dy, double* sums) {
  if (g.stride_h == 2) return weight_gradient_stride2(x, dy, sums, g.in_h, g.out_h, g.out_w);
  weight_gradient_stride1(x, dy, sums, g.out_h, g.out_w);
}

void depthwise_vector_input_gradient_plane(const ConvGeometry& g, const float* dy, const float* w, float* dx) {
  if (g.stride_h == 2) return input_gradient_stride2(dy, w, dx, g.out_h, g.out_w, g.in_h);
  float turned[9];
  for (int t = 0; t < 9; ++t) turned[t] = w[8 - t];
  plane_stride1(dy, turned, 0.0f, Clamp{-__builtin_inff(), __builtin_inff()}, dx, g.out_h, g.out_w);
}

void depthwise_vector_plane(const ConvGeometry& g, const float* x, const float* taps, float bias, Clamp c, float* y) {
  if (g.stride_w == 1) {
    plane_stride1(x, taps, bias, c, y, g.out_h, g.out_w);
  } else {
    plane_stride2(x, taps, bias, c, y, g.in_h, g.out_h, g.out_w);
  }
}

}  // namespace pock::cpu
