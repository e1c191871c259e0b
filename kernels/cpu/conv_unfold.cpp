#include "kernels/cpu/conv_unfold.hpp"

#include <algorithm>

#include "kernels/cpu/conv_grad_geometry.hpp"
#include "kernels/cpu/simd.hpp"

namespace pock::cpu {
namespace {

// y[i * stride] += x[i] for i in [0, n): the scatter of one column row back onto an input row.
POCK_SIMD_CLONES void strided_accumulate(const float* x, float* y, int64_t stride, int64_t n) {
  if (stride == 1) {
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) y[i] += x[i];
  } else {
    for (int64_t i = 0; i < n; ++i) y[i * stride] += x[i];
  }
}

int64_t taps(const ConvGeometry& g) { return g.kernel_h * g.kernel_w; }

}  // namespace

void im2col(const ConvGeometry& g, const float* x, float* cols, pthreadpool_t pool, int64_t row_stride) {
  const size_t rows = static_cast<size_t>(g.in_per_group() * taps(g));
  parallel_for(pool, rows, balanced_tile(pool, rows, 8), [&](size_t begin, size_t end) {
    for (size_t r = begin; r < end; ++r) {
      const int64_t row = static_cast<int64_t>(r);
      const int64_t kx = row % g.kernel_w, ky = row / g.kernel_w % g.kernel_h, channel = row / taps(g);
      const float* plane = x + channel * g.in_plane();
      const TapColumns t = tap_columns(g, kx);
      float* out = cols + row * row_stride;
      for (int64_t oy = 0; oy < g.out_h; ++oy, out += g.out_w) {
        const int64_t iy = tap_row(g, oy, ky);
        if (iy < 0) {
          std::fill(out, out + g.out_w, 0.0f);
          continue;
        }
        const float* in_row = plane + iy * g.in_w + t.shift;
        std::fill(out, out + t.begin, 0.0f);
        for (int64_t ox = t.begin; ox < t.end; ++ox) out[ox] = in_row[ox * g.stride_w];
        std::fill(out + t.end, out + g.out_w, 0.0f);
      }
    }
  });
}

void col2im(const ConvGeometry& g, const float* cols, float* dx, pthreadpool_t pool, int64_t row_stride) {
  // One task per input channel: its kh * kw column rows land only on its own plane, so tasks
  // never write the same pixel.
  const size_t channels = static_cast<size_t>(g.in_per_group());
  parallel_for(pool, channels, balanced_tile(pool, channels, 1), [&](size_t begin, size_t end) {
    for (size_t ch = begin; ch < end; ++ch) {
      float* plane = dx + static_cast<int64_t>(ch) * g.in_plane();
      std::fill(plane, plane + g.in_plane(), 0.0f);
      for (int64_t ky = 0; ky < g.kernel_h; ++ky) {
        for (int64_t kx = 0; kx < g.kernel_w; ++kx) {
          const TapColumns t = tap_columns(g, kx);
          const float* row = cols + ((static_cast<int64_t>(ch) * g.kernel_h + ky) * g.kernel_w + kx) * row_stride;
          for (int64_t oy = 0; oy < g.out_h; ++oy) {
            const int64_t iy = tap_row(g, oy, ky);
            if (iy < 0 || t.begin >= t.end) continue;
            strided_accumulate(row + oy * g.out_w + t.begin, plane + iy * g.in_w + t.begin * g.stride_w + t.shift,
                               g.stride_w, t.end - t.begin);
          }
        }
      }
    }
  });
}

}  // namespace pock::cpu
