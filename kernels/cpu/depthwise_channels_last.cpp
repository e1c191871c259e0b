// The per-pixel sums that the channels-last depthwise convolution and its input gradient share
// (depthwise_channels_last.hpp): both gather, for each destination pixel, the taps' weights times
// the source pixels the taps connect it to, with the channels as the vector lanes.
#include "kernels/cpu/depthwise_channels_last.hpp"

#include "kernels/cpu/conv_grad_geometry.hpp"
#include "kernels/cpu/simd.hpp"

namespace pock::cpu {
namespace {

// The output index that tap k of an axis reaches input index i from, or -1 when none does (the
// tap's offset k * dilation - pad does not land i on a multiple of the stride, or lands it outside
// [0, out)).
inline int64_t source_index(int64_t i, int64_t k, int64_t stride, int64_t dilation, int64_t pad, int64_t out) {
  const int64_t num = i + pad - k * dilation;
  if (num < 0 || num % stride != 0) return -1;
  const int64_t o = num / stride;
  return o < out ? o : -1;
}

// The source row (forward: the input row the tap covers; input gradient: the output row whose
// window puts the tap on this row), or -1.
inline int64_t source_row(const ConvGeometry& g, bool input_gradient, int64_t y, int64_t ky) {
  if (input_gradient) return source_index(y, ky, g.stride_h, g.dilation_h, g.pad_top, g.out_h);
  return tap_row(g, y, ky);
}

inline int64_t source_column(const ConvGeometry& g, bool input_gradient, int64_t x, int64_t kx) {
  if (input_gradient) return source_index(x, kx, g.stride_w, g.dilation_w, g.pad_left, g.out_w);
  const int64_t ix = x * g.stride_w - g.pad_left + kx * g.dilation_w;
  return ix >= 0 && ix < g.in_w ? ix : -1;
}

}  // namespace

POCK_SIMD_CLONES void depthwise_tap_sums(const ConvGeometry& g, bool input_gradient, const float* src, const float* w_t,
                                         float* dst, int64_t row_begin, int64_t row_end) {
  const int64_t c_count = g.in_channels;
  const int64_t dst_h = input_gradient ? g.in_h : g.out_h, dst_w = input_gradient ? g.in_w : g.out_w;
  const int64_t src_h = input_gradient ? g.out_h : g.in_h, src_w = input_gradient ? g.out_w : g.in_w;
  for (int64_t row = row_begin; row < row_end; ++row) {
    const int64_t n = row / dst_h, y = row % dst_h;
    for (int64_t x = 0; x < dst_w; ++x) {
      float* out = dst + ((n * dst_h + y) * dst_w + x) * c_count;
#pragma omp simd
      for (int64_t c = 0; c < c_count; ++c) out[c] = 0.0f;
      for (int64_t ky = 0; ky < g.kernel_h; ++ky) {
        const int64_t sy = source_row(g, input_gradient, y, ky);
        if (sy < 0) continue;
        for (int64_t kx = 0; kx < g.kernel_w; ++kx) {
          const int64_t sx = source_column(g, input_gradient, x, kx);
          if (sx < 0) continue;
          const float* wk = w_t + (ky * g.kernel_w + kx) * c_count;
          const float* in = src + ((n * src_h + sy) * src_w + sx) * c_count;
#pragma omp simd
          for (int64_t c = 0; c < c_count; ++c) out[c] += wk[c] * in[c];
        }
      }
    }
  }
}

}  // namespace pock::cpu
