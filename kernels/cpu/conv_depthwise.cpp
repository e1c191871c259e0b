// Depthwise Conv2d (one input channel per group, any depth multiplier) directly on NCHW. The weight
// is read on every run, so this is the path for a trainable depthwise weight; it needs no library.
//   3x3 and 5x5, no dilation (MobileNet's and EfficientNet's layers) on rows of 8 or more output
//     columns padded as PyTorch or TensorFlow pad them: whole planes in vectors
//     (depthwise_vector_rows.hpp).
//   other 3x3 undilated windows: one pass per output row that reads three input rows and keeps the
//     nine taps in registers; the columns whose window lies inside the row are one vector loop (a
//     strided read at stride 2), the few at the edges a scalar loop. Bias and activation are
//     applied before the row is stored.
//   anything else: every output plane is its bias plus, per tap, a scaled and shifted copy of one
//     input plane, vectorized along the row (a gather when strided).
#include <algorithm>
#include <new>

#include "kernels/cpu/activation_epilogue.hpp"
#include "kernels/cpu/conv_kernel.hpp"
#include "kernels/cpu/cpu_util.hpp"
#include "kernels/cpu/depthwise_vector_rows.hpp"
#include "kernels/cpu/simd.hpp"
#include "kernels/cpu/thread_pool.hpp"
#include "runtime/mapped_file.hpp"

namespace pock::cpu {
namespace {

// y[i] += w * x[i * stride] for i in [0, n).
POCK_SIMD_CLONES void scaled_accumulate(float w, const float* x, int64_t stride, float* y, int64_t n) {
  if (stride == 1) {
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) y[i] += w * x[i];
  } else {
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) y[i] += w * x[i * stride];
  }
}

POCK_SIMD_INLINE float clamp(float v, Clamp c) {
  v = v < c.lo ? c.lo : v;
  return v > c.hi ? c.hi : v;
}

// One output row of a 3x3 window over rows r0, r1, r2 whose columns are all inside the input:
// y[i] = clamp(bias + sum_k w[3k + j] * rk[i * stride + j]) for i in [0, n). A row in the padding
// comes with zero weights (and any valid pointer), which keeps the loop branch-free.
template <int64_t kStride>
POCK_SIMD_INLINE void row3x3(const float* r0, const float* r1, const float* r2, const float* w, float bias, Clamp c,
                             float* y, int64_t n) {
  const float w0 = w[0], w1 = w[1], w2 = w[2], w3 = w[3], w4 = w[4], w5 = w[5], w6 = w[6], w7 = w[7], w8 = w[8];
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) {
    const int64_t j = i * kStride;
    float a = bias + w0 * r0[j] + w1 * r0[j + 1] + w2 * r0[j + 2];
    a += w3 * r1[j] + w4 * r1[j + 1] + w5 * r1[j + 2];
    a += w6 * r2[j] + w7 * r2[j + 1] + w8 * r2[j + 2];
    y[i] = clamp(a, c);
  }
}

// Whole blocks of 16 columns, then the last 16 again when n is not a multiple: recomputing a few
// outputs is cheaper than the scalar tail a vector loop ends with (rows of 30 output columns ran
// at half the speed of rows of 62).
template <int64_t kStride>
POCK_SIMD_INLINE void row3x3_blocks(const float* r0, const float* r1, const float* r2, const float* w, float bias,
                                    Clamp c, float* y, int64_t n) {
  constexpr int64_t kBlock = 16;
  if (n <= kBlock) return row3x3<kStride>(r0, r1, r2, w, bias, c, y, n);
  const int64_t whole = n / kBlock * kBlock;
  row3x3<kStride>(r0, r1, r2, w, bias, c, y, whole);
  if (whole == n) return;
  const int64_t at = n - kBlock, from = at * kStride;
  row3x3<kStride>(r0 + from, r1 + from, r2 + from, w, bias, c, y + at, kBlock);
}

POCK_SIMD_CLONES void row3x3_stride1(const float* r0, const float* r1, const float* r2, const float* w, float bias,
                                     Clamp c, float* y, int64_t n) {
  row3x3_blocks<1>(r0, r1, r2, w, bias, c, y, n);
}

POCK_SIMD_CLONES void row3x3_stride2(const float* r0, const float* r1, const float* r2, const float* w, float bias,
                                     Clamp c, float* y, int64_t n) {
  row3x3_blocks<2>(r0, r1, r2, w, bias, c, y, n);
}

// Smallest integer >= a / b for b > 0 (C++ division truncates toward zero).
int64_t ceil_div(int64_t a, int64_t b) { return a >= 0 ? (a + b - 1) / b : -((-a) / b); }

class DepthwiseConv final : public ConvKernel {
 public:
  DepthwiseConv(const ConvGeometry& g, int32_t num_threads) : g_(g), pool_(thread_pool_for(num_threads)) {
    three_by_three_ = g.kernel_h == 3 && g.kernel_w == 3 && g.dilation_h == 1 && g.dilation_w == 1 &&
                      (g.stride_w == 1 || g.stride_w == 2);
    if (three_by_three_) {
      // Output columns whose three input columns ox*stride - pad_left + {0, 1, 2} are all inside.
      inner_begin_ = std::min(g.out_w, ceil_div(g.pad_left, g.stride_w));
      inner_end_ = std::max(inner_begin_, std::min(g.out_w, (g.in_w - 3 + g.pad_left) / g.stride_w + 1));
      if (g.in_w + g.pad_left < 3) inner_end_ = inner_begin_;
    }
    vector_planes_ = depthwise_vector_rows_take(g);  // 3x3, or 5x5
  }

  // The row of zeros output_plane_3x3 reads for a row in the padding, allocated at prepare.
  Status init() {
    if (!three_by_three_ || vector_planes_) return Status::ok();
    POCK_RETURN_IF_ERROR(zero_row_.allocate(static_cast<size_t>(g_.in_w) * sizeof(float), "Conv2d depthwise zero row"));
    std::fill_n(reinterpret_cast<float*>(zero_row_.data()), g_.in_w, 0.0f);
    return Status::ok();
  }

  Status run(const KernelCall& c) override {
    const float* x = c.in_data<float>(0);
    const float* w = c.in_data<float>(1);
    const float* bias = g_.has_bias ? c.in_data<float>(2) : nullptr;
    float* y = c.out_data<float>(0);
    const size_t planes = static_cast<size_t>(g_.batch * g_.out_channels);
    parallel_for(pool_, planes, balanced_tile(pool_, planes, 1), [&](size_t begin, size_t end) {
      for (size_t p = begin; p < end; ++p) {
        const int64_t n = static_cast<int64_t>(p) / g_.out_channels;
        const int64_t o = static_cast<int64_t>(p) % g_.out_channels;
        const int64_t channel = o / g_.out_per_group();  // the one input channel of o's group
        const float* x_plane = x + (n * g_.in_channels + channel) * g_.in_plane();
        const float* w_plane = w + o * g_.kernel_h * g_.kernel_w;
        float* plane = y + p * g_.out_plane();
        if (vector_planes_) {
          depthwise_vector_plane(g_, x_plane, w_plane, bias ? bias[o] : 0.0f, clamp_of(g_.activation), plane);
        } else if (three_by_three_) {
          output_plane_3x3(x_plane, w_plane, bias ? bias[o] : 0.0f, plane);
        } else {
          output_plane(x_plane, w_plane, bias ? bias[o] : 0.0f, plane);
          apply_activation_inplace(g_.activation, plane, g_.out_plane());
        }
      }
    });
    return Status::ok();
  }

 private:
  void output_plane_3x3(const float* x, const float* w, float bias, float* y) const {
    const Clamp c = clamp_of(g_.activation);
    const float* zeros = reinterpret_cast<const float*>(zero_row_.data());
    for (int64_t oy = 0; oy < g_.out_h; ++oy) {
      // The three input rows; one in the padding reads a row of zeros with zero weights (not a row
      // of the input, whose infinity or NaN times zero would reach an output that does not read it).
      const float* rows[3];
      float taps[9];
      for (int64_t ky = 0; ky < 3; ++ky) {
        const int64_t iy = oy * g_.stride_h - g_.pad_top + ky;
        const bool inside = iy >= 0 && iy < g_.in_h;
        rows[ky] = inside ? x + iy * g_.in_w : zeros;
        for (int64_t kx = 0; kx < 3; ++kx) taps[ky * 3 + kx] = inside ? w[ky * 3 + kx] : 0.0f;
      }
      float* y_row = y + oy * g_.out_w;
      if (inner_end_ > inner_begin_) {
        const int64_t at = inner_begin_ * g_.stride_w - g_.pad_left;
        const int64_t n = inner_end_ - inner_begin_;
        if (g_.stride_w == 1) {
          row3x3_stride1(rows[0] + at, rows[1] + at, rows[2] + at, taps, bias, c, y_row + inner_begin_, n);
        } else {
          row3x3_stride2(rows[0] + at, rows[1] + at, rows[2] + at, taps, bias, c, y_row + inner_begin_, n);
        }
      }
      for (int64_t ox = 0; ox < g_.out_w; ++ox) {
        if (ox == inner_begin_ && inner_end_ > inner_begin_) ox = inner_end_;
        if (ox >= g_.out_w) break;
        float a = bias;
        for (int64_t kx = 0; kx < 3; ++kx) {
          const int64_t ix = ox * g_.stride_w - g_.pad_left + kx;
          if (ix < 0 || ix >= g_.in_w) continue;
          a += taps[kx] * rows[0][ix] + taps[3 + kx] * rows[1][ix] + taps[6 + kx] * rows[2][ix];
        }
        y_row[ox] = clamp(a, c);
      }
    }
  }

  void output_plane(const float* x, const float* w, float bias, float* y) const {
    std::fill(y, y + g_.out_plane(), bias);
    for (int64_t ky = 0; ky < g_.kernel_h; ++ky) {
      for (int64_t kx = 0; kx < g_.kernel_w; ++kx) {
        const float weight = w[ky * g_.kernel_w + kx];
        // Output columns whose input column ox*stride - pad_left + kx*dilation lies inside the row.
        const int64_t shift = kx * g_.dilation_w - g_.pad_left;
        const int64_t ox0 = std::max<int64_t>(0, ceil_div(-shift, g_.stride_w));
        const int64_t ox1 = std::min<int64_t>(g_.out_w, ceil_div(g_.in_w - shift, g_.stride_w));
        if (ox0 >= ox1) continue;
        for (int64_t oy = 0; oy < g_.out_h; ++oy) {
          const int64_t iy = oy * g_.stride_h - g_.pad_top + ky * g_.dilation_h;
          if (iy < 0 || iy >= g_.in_h) continue;
          scaled_accumulate(weight, x + iy * g_.in_w + ox0 * g_.stride_w + shift, g_.stride_w, y + oy * g_.out_w + ox0,
                            ox1 - ox0);
        }
      }
    }
  }

  ConvGeometry g_;
  pthreadpool_t pool_;
  AlignedBuffer zero_row_;
  bool three_by_three_ = false;  // the row-at-a-time 3x3 loops run it
  int64_t inner_begin_ = 0, inner_end_ = 0;  // output columns the 3x3 vector loop computes
  bool vector_planes_ = false;               // depthwise_vector_rows.hpp computes every column
};

}  // namespace

std::unique_ptr<ConvKernel> make_depthwise_conv(const pock_op_desc& op, const ConvGeometry& g, KernelScope&,
                                                Status* status) {
  *status = Status::ok();
  if (!g.is_depthwise()) return nullptr;
  auto conv = std::unique_ptr<DepthwiseConv>(new (std::nothrow) DepthwiseConv(g, op.num_threads));
  if (!conv) {
    *status = Status(Code::kOutOfMemory, "Conv2d depthwise state");
    return nullptr;
  }
  *status = conv->init();
  if (!status->is_ok()) return nullptr;
  return conv;
}

}  // namespace pock::cpu
