#include "kernels/cpu/depthwise_vector_rows.hpp"

#include "kernels/cpu/depthwise_vector_lanes.hpp"
#include "kernels/cpu/depthwise_vector_rows_5x5.hpp"
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

struct Taps {
  Vec8 t[9];
  Vec8 bias, lo, hi;
};

POCK_SIMD_INLINE Taps taps_of(const float* taps, float bias, Clamp c) {
  Taps k;
  for (int i = 0; i < 9; ++i) k.t[i] = splat8(taps[i]);
  k.bias = splat8(bias);
  k.lo = splat8(c.lo);
  k.hi = splat8(c.hi);
  return k;
}

// What the taps of one tap row read for output columns [x, x + 8): c[kx] for tap column kx, in
// the stride's lane order. The block at the row's start (kLeftEdge) or end (kRightEdge) takes the
// column outside the row as a zero lane. Stride 1 has pad 1; stride 2 pad kPad.
struct Window {
  Vec8 c[3];
};

template <int kStride, int kPad, bool kLeftEdge, bool kRightEdge>
POCK_SIMD_INLINE Window window_columns(const float* r, int64_t x) {
  if constexpr (kStride == 1) {
    const Vec8 mid = load8(r + x);
    return {{kLeftEdge ? shift_right<1>(mid) : load8(r + x - 1), mid,
             kRightEdge ? shift_left<1>(mid) : load8(r + x + 1)}};
  } else {
    const float* at = r + 2 * x;
    const Vec8 a = load8(at), b = load8(at + 8);
    if constexpr (kPad == 1) {
      const Vec8 a_before = kLeftEdge ? shift_right<1>(a) : load8(at - 1), b_before = load8(at + 7);
      return {{even_lanes(a_before, b_before), even_lanes(a, b), odd_lanes(a, b)}};
    } else {
      const Vec8 a_after = load8(at + 1), b_after = kRightEdge ? shift_left<1>(b) : load8(at + 9);
      return {{even_lanes(a, b), odd_lanes(a, b), odd_lanes(a_after, b_after)}};
    }
  }
}

// The input row under tap row 1 of output row oy, and which of the rows above and below it exist.
struct RowWindow {
  int64_t middle;
  bool above, below;
};
template <int kStride, int kPad>
POCK_SIMD_INLINE RowWindow row_window(int64_t oy, int64_t in_height) {
  const int64_t middle = kStride * oy + 1 - kPad;
  return {middle, middle > 0, middle + 1 < in_height};
}

// Each row function below writes the sequence of a row's blocks (depthwise_vector_lanes.hpp)
// out with the edges as template arguments: through a generic lambda the taps lose their
// registers, 10-20 % on 8x8 planes.

// Output columns [col, col + 8) of one row: r points at the input row under tap row 1;
// kAbove / kBelow whether the rows above and below it exist.
template <int kStride, int kPad, bool kAbove, bool kBelow, bool kLeftEdge, bool kRightEdge>
POCK_SIMD_INLINE void output_block(const float* r, int64_t in_width, const Taps& k, int64_t col, float* out) {
  const Window middle = window_columns<kStride, kPad, kLeftEdge, kRightEdge>(r, col);
  Vec8 acc = k.t[3] * middle.c[0] + k.t[4] * middle.c[1] + k.t[5] * middle.c[2];
  if (kAbove) {
    const Window w = window_columns<kStride, kPad, kLeftEdge, kRightEdge>(r - in_width, col);
    acc += k.t[0] * w.c[0] + k.t[1] * w.c[1] + k.t[2] * w.c[2];
  }
  if (kBelow) {
    const Window w = window_columns<kStride, kPad, kLeftEdge, kRightEdge>(r + in_width, col);
    acc += k.t[6] * w.c[0] + k.t[7] * w.c[1] + k.t[8] * w.c[2];
  }
  if constexpr (kStride == 2) acc = in_column_order(acc);
  store8(out + col, clamp8(k.bias + acc, k.lo, k.hi));
}

template <int kStride, int kPad, bool kAbove, bool kBelow>
POCK_SIMD_INLINE void output_row(const float* r, int64_t in_width, int64_t width, const Taps& k, float* out) {
  if (width == 8) return output_block<kStride, kPad, kAbove, kBelow, true, true>(r, in_width, k, 0, out);
  output_block<kStride, kPad, kAbove, kBelow, true, false>(r, in_width, k, 0, out);
  const int64_t last = width - 8;
  for (int64_t x = 8; x < last; x += 8) output_block<kStride, kPad, kAbove, kBelow, false, false>(r, in_width, k, x, out);
  output_block<kStride, kPad, kAbove, kBelow, false, true>(r, in_width, k, last, out);
}

// One output plane; the input gradient at stride 1 is the same with the taps turned. The taps are
// splat in the clone, into its own registers: on 8x8 planes that is a good part of the work.
template <int kStride, int kPad>
POCK_SIMD_INLINE void output_plane(const float* x, const float* taps, float bias, Clamp c, float* y,
                                   int64_t in_height, int64_t height, int64_t width) {
  const Taps k = taps_of(taps, bias, c);
  const int64_t in_width = kStride * width;
  if constexpr (kStride == 1) {
    if (height == 1) return output_row<1, 1, false, false>(x, width, width, k, y);
    output_row<1, 1, false, true>(x, width, width, k, y);
    for (int64_t oy = 1; oy + 1 < height; ++oy) output_row<1, 1, true, true>(x + oy * width, width, width, k, y + oy * width);
    return output_row<1, 1, true, false>(x + (height - 1) * width, width, width, k, y + (height - 1) * width);
  }
  for (int64_t oy = 0; oy < height; ++oy) {
    const RowWindow rows = row_window<kStride, kPad>(oy, in_height);
    const float* r = x + rows.middle * in_width;
    float* out = y + oy * width;
    if (rows.above && rows.below) {
      output_row<kStride, kPad, true, true>(r, in_width, width, k, out);
    } else if (rows.below) {
      output_row<kStride, kPad, false, true>(r, in_width, width, k, out);
    } else if (rows.above) {
      output_row<kStride, kPad, true, false>(r, in_width, width, k, out);
    } else {
      output_row<kStride, kPad, false, false>(r, in_width, width, k, out);
    }
  }
}

POCK_SIMD_CLONES void output_plane_stride1(const float* x, const float* taps, float bias, Clamp c, float* y,
                                           int64_t in_height, int64_t height, int64_t width) {
  output_plane<1, 1>(x, taps, bias, c, y, in_height, height, width);
}
POCK_SIMD_CLONES void output_plane_stride2_pad1(const float* x, const float* taps, float bias, Clamp c, float* y,
                                                int64_t in_height, int64_t height, int64_t width) {
  output_plane<2, 1>(x, taps, bias, c, y, in_height, height, width);
}
POCK_SIMD_CLONES void output_plane_stride2_pad0(const float* x, const float* taps, float bias, Clamp c, float* y,
                                                int64_t in_height, int64_t height, int64_t width) {
  output_plane<2, 0>(x, taps, bias, c, y, in_height, height, width);
}
void output_plane_clones(const ConvGeometry& g, const float* x, const float* taps, float bias, Clamp c, float* y) {
  if (g.stride_w == 1) return output_plane_stride1(x, taps, bias, c, y, g.in_h, g.out_h, g.out_w);
  if (g.pad_left == 1) return output_plane_stride2_pad1(x, taps, bias, c, y, g.in_h, g.out_h, g.out_w);
  output_plane_stride2_pad0(x, taps, bias, c, y, g.in_h, g.out_h, g.out_w);
}

// The input gradient at stride 2, by the parity of dx's coordinates: with w the taps, a = dy[i][j..j+8),
// a1 / a0 the same one column on / back (zero past the row), and b / b1 (pad 1) or c / c0 (pad 0)
// those of dy row i + 1 / i - 1 (zero past the plane),
//   pad 1: dx[2i][2j]     = w4 a                    pad 0: dx[2i][2j]     = w0 a + w2 a0 + w6 c + w8 c0
//          dx[2i][2j+1]   = w3 a1 + w5 a                   dx[2i][2j+1]   = w1 a + w7 c
//          dx[2i+1][2j]   = w1 b + w7 a                    dx[2i+1][2j]   = w3 a + w5 a0
//          dx[2i+1][2j+1] = w0 b1 + w2 b + w6 a1 + w8 a    dx[2i+1][2j+1] = w4 a
// and each pair of parities is interleaved into 16 consecutive columns. The overlapping last block
// of a row writes the same values again.

// dy's columns [j, j + 8) of row a_row, and of the row beside it (other_row, null past the plane).
template <int kPad, bool kLeftEdge, bool kRightEdge>
POCK_SIMD_INLINE void input_gradient_block(const float* a_row, const float* other_row, const Vec8* t, int64_t j,
                                           float* dx_even, float* dx_odd) {
  const Vec8 a = load8(a_row + j);
  const Vec8 o = other_row ? load8(other_row + j) : Vec8{};
  if constexpr (kPad == 1) {
    const Vec8 a1 = kRightEdge ? shift_left<1>(a) : load8(a_row + j + 1);
    store_interleaved(dx_even + 2 * j, t[4] * a, t[3] * a1 + t[5] * a);
    if (!dx_odd) return;
    const Vec8 o1 = !other_row ? Vec8{} : kRightEdge ? shift_left<1>(o) : load8(other_row + j + 1);
    store_interleaved(dx_odd + 2 * j, t[1] * o + t[7] * a, t[0] * o1 + t[2] * o + t[6] * a1 + t[8] * a);
  } else {
    const Vec8 a0 = kLeftEdge ? shift_right<1>(a) : load8(a_row + j - 1);
    const Vec8 o0 = !other_row ? Vec8{} : kLeftEdge ? shift_right<1>(o) : load8(other_row + j - 1);
    store_interleaved(dx_even + 2 * j, t[0] * a + t[2] * a0 + t[6] * o + t[8] * o0, t[1] * a + t[7] * o);
    store_interleaved(dx_odd + 2 * j, t[3] * a + t[5] * a0, t[4] * a);
  }
}

template <int kPad>
POCK_SIMD_INLINE void input_gradient_stride2(const float* dy, const float* taps, float* dx, int64_t height,
                                             int64_t width, int64_t in_height) {
  Vec8 t[9];
  for (int i = 0; i < 9; ++i) t[i] = splat8(taps[i]);
  const int64_t in_width = 2 * width, last = width - 8;
  for (int64_t i = 0; i < height; ++i) {
    const float* a_row = dy + i * width;
    // pad 1: dy row i + 1 and dx row 2i + 1 (either may be past the plane); pad 0: dy row i - 1.
    const float* other_row = kPad == 1 ? (i + 1 < height ? a_row + width : nullptr) : (i > 0 ? a_row - width : nullptr);
    float* dx_even = dx + 2 * i * in_width;
    float* dx_odd = kPad == 0 || 2 * i + 1 < in_height ? dx_even + in_width : nullptr;
    if (width == 8) {
      input_gradient_block<kPad, true, true>(a_row, other_row, t, 0, dx_even, dx_odd);
      continue;
    }
    input_gradient_block<kPad, true, false>(a_row, other_row, t, 0, dx_even, dx_odd);
    for (int64_t j = 8; j < last; j += 8) input_gradient_block<kPad, false, false>(a_row, other_row, t, j, dx_even, dx_odd);
    input_gradient_block<kPad, false, true>(a_row, other_row, t, last, dx_even, dx_odd);
  }
}

POCK_SIMD_CLONES void input_gradient_stride2_clones(const ConvGeometry& g, const float* dy, const float* taps,
                                                    float* dx) {
  if (g.pad_left == 1) return input_gradient_stride2<1>(dy, taps, dx, g.out_h, g.out_w, g.in_h);
  input_gradient_stride2<0>(dy, taps, dx, g.out_h, g.out_w, g.in_h);
}

// The weight gradient: tap (ky, kx) sums dy times the input pixel the tap read for it, the same
// window reads as the forward's, each tap's products kept in its own vector and summed across
// lanes once per plane (added to the double sums). The lanes of dy that an overlapping last block
// has seen already are zeroed, by bits, so that an infinity there counts once.
template <int kStride, int kPad, bool kLeftEdge, bool kRightEdge>
POCK_SIMD_INLINE void accumulate_taps(const float* row, Vec8 d, int64_t col, Vec8* acc) {
  const Window w = window_columns<kStride, kPad, kLeftEdge, kRightEdge>(row, col);
  acc[0] += d * w.c[0];
  acc[1] += d * w.c[1];
  acc[2] += d * w.c[2];
}

template <int kStride, int kPad, bool kAbove, bool kBelow, bool kLeftEdge, bool kRightEdge>
POCK_SIMD_INLINE void weight_gradient_block(const float* r, int64_t in_width, const float* d_row, int64_t col,
                                            Bits unseen, Vec8* acc) {
  Vec8 d = load8(d_row + col);
  if (kRightEdge && !kLeftEdge) d = keep_lanes(d, unseen);  // 8 wide: one block
  if constexpr (kStride == 2) d = in_column_order(d);  // the order is its own inverse
  if (kAbove) accumulate_taps<kStride, kPad, kLeftEdge, kRightEdge>(r - in_width, d, col, acc);
  accumulate_taps<kStride, kPad, kLeftEdge, kRightEdge>(r, d, col, acc + 3);
  if (kBelow) accumulate_taps<kStride, kPad, kLeftEdge, kRightEdge>(r + in_width, d, col, acc + 6);
}

template <int kStride, int kPad, bool kAbove, bool kBelow>
POCK_SIMD_INLINE void weight_gradient_row(const float* r, int64_t in_width, const float* d_row, int64_t width,
                                          Bits unseen, Vec8* acc) {
  if (width == 8) {
    return weight_gradient_block<kStride, kPad, kAbove, kBelow, true, true>(r, in_width, d_row, 0, unseen, acc);
  }
  weight_gradient_block<kStride, kPad, kAbove, kBelow, true, false>(r, in_width, d_row, 0, unseen, acc);
  const int64_t last = width - 8;
  for (int64_t x = 8; x < last; x += 8) {
    weight_gradient_block<kStride, kPad, kAbove, kBelow, false, false>(r, in_width, d_row, x, unseen, acc);
  }
  weight_gradient_block<kStride, kPad, kAbove, kBelow, false, true>(r, in_width, d_row, last, unseen, acc);
}

template <int kStride, int kPad>
POCK_SIMD_INLINE void weight_gradient(const float* x, const float* dy, double* sums, int64_t in_height,
                                      int64_t height, int64_t width) {
  const Bits unseen = unseen_lanes(width);
  const int64_t in_width = kStride * width;
  Vec8 acc[9] = {};
  for (int64_t oy = 0; oy < height; ++oy) {
    const RowWindow rows = row_window<kStride, kPad>(oy, in_height);
    const float* r = x + rows.middle * in_width;
    const float* d_row = dy + oy * width;
    if (rows.above && rows.below) {
      weight_gradient_row<kStride, kPad, true, true>(r, in_width, d_row, width, unseen, acc);
    } else if (rows.below) {
      weight_gradient_row<kStride, kPad, false, true>(r, in_width, d_row, width, unseen, acc);
    } else if (rows.above) {
      weight_gradient_row<kStride, kPad, true, false>(r, in_width, d_row, width, unseen, acc);
    } else {
      weight_gradient_row<kStride, kPad, false, false>(r, in_width, d_row, width, unseen, acc);
    }
  }
  for (int t = 0; t < 9; ++t) sums[t] += lane_sum8(acc[t]);
}

POCK_SIMD_CLONES void weight_gradient_clones(const ConvGeometry& g, const float* x, const float* dy, double* sums) {
  if (g.stride_w == 1) return weight_gradient<1, 1>(x, dy, sums, g.in_h, g.out_h, g.out_w);
  if (g.pad_left == 1) return weight_gradient<2, 1>(x, dy, sums, g.in_h, g.out_h, g.out_w);
  weight_gradient<2, 0>(x, dy, sums, g.in_h, g.out_h, g.out_w);
}

}  // namespace

bool depthwise_vector_rows_take(const ConvGeometry& g) {
  const int64_t s = g.stride_w, k = g.kernel_w, w = g.out_w;
  if ((k != 3 && k != 5) || g.kernel_h != k || g.dilation_h != 1 || g.dilation_w != 1 || (s != 1 && s != 2) ||
      g.stride_h != s || w < 8 || g.in_w != s * w || g.out_h <= 0 || g.pad_top != g.pad_left) {
    return false;
  }
  const int64_t center = k / 2, pad = g.pad_top;
  if (s == 1) {
    // Pad K / 2 on every side: the last output row is the last input row's. A 5x5 window reads
    // two columns past a block, so a block before the last must end two columns inside the row:
    // widths of 8, or of 10 or more that are not one past a multiple of 8.
    if (pad != center || g.in_h != g.out_h) return false;
    return k == 3 || w == 8 || (w >= 10 && w % 8 != 1);
  }
  // Stride 2: PyTorch's pad K / 2, or TensorFlow's "same" on even sizes, one less on top and left
  // (the rest on the bottom and right). Every output row's center input row exists; the rows
  // around it may not.
  if (pad != center && pad != center - 1) return false;
  return 2 * (g.out_h - 1) - pad + center < g.in_h;
}

bool depthwise_vector_rows_take_input_gradient(const ConvGeometry& g) {
  if (g.out_per_group() != 1 || !depthwise_vector_rows_take(g)) return false;
  // Stride 1: the forward's window over dy with the taps turned. Stride 2: every dx row is one of
  // the two that a dy row's pair of parities writes (3x3 also drops the last of an odd height).
  if (g.stride_h == 1) return true;
  return g.in_h == 2 * g.out_h || (g.kernel_h == 3 && g.pad_top == 1 && g.in_h == 2 * g.out_h - 1);
}

void depthwise_vector_weight_gradient_plane(const ConvGeometry& g, const float* x, const float* dy, double* sums) {
  if (g.kernel_w == 5) return depthwise_5x5_weight_gradient_plane(g, x, dy, sums);
  weight_gradient_clones(g, x, dy, sums);
}

void depthwise_vector_input_gradient_plane(const ConvGeometry& g, const float* dy, const float* w, float* dx) {
  if (g.stride_h == 2 && g.kernel_h == 5) return depthwise_5x5_input_gradient_stride2_plane(g, dy, w, dx);
  if (g.stride_h == 2) return input_gradient_stride2_clones(g, dy, w, dx);
  const int64_t taps = g.kernel_h * g.kernel_w;
  float turned[25];
  for (int64_t t = 0; t < taps; ++t) turned[t] = w[taps - 1 - t];
  const Clamp none{-__builtin_inff(), __builtin_inff()};
  if (g.kernel_w == 5) return depthwise_5x5_plane(g, dy, turned, 0.0f, none, dx);
  output_plane_clones(g, dy, turned, 0.0f, none, dx);
}

void depthwise_vector_plane(const ConvGeometry& g, const float* x, const float* taps, float bias, Clamp c, float* y) {
  if (g.kernel_w == 5) return depthwise_5x5_plane(g, x, taps, bias, c, y);
  output_plane_clones(g, x, taps, bias, c, y);
}

}  // namespace pock::cpu
