// Depthwise Conv2d (one input channel per group, any depth multiplier) directly on NCHW: every
// output plane is its bias plus, per filter tap, a scaled and shifted copy of one input plane.
// The inner loop runs along an output row and vectorizes (a gather when strided). The weight is
// read on every run, so this is the path for a trainable depthwise weight; it needs no library.
#include <algorithm>
#include <new>

#include "kernels/cpu/activation_epilogue.hpp"
#include "kernels/cpu/conv_kernel.hpp"
#include "kernels/cpu/cpu_util.hpp"
#include "kernels/cpu/simd.hpp"
#include "kernels/cpu/thread_pool.hpp"

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

// Smallest integer >= a / b for b > 0 (C++ division truncates toward zero).
int64_t ceil_div(int64_t a, int64_t b) { return a >= 0 ? (a + b - 1) / b : -((-a) / b); }

class DepthwiseConv final : public ConvKernel {
 public:
  DepthwiseConv(const ConvGeometry& g, int32_t num_threads) : g_(g), pool_(thread_pool_for(num_threads)) {}

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
        float* plane = y + p * g_.out_plane();
        output_plane(x + (n * g_.in_channels + channel) * g_.in_plane(), w + o * g_.kernel_h * g_.kernel_w,
                     bias ? bias[o] : 0.0f, plane);
        apply_activation_inplace(g_.activation, plane, g_.out_plane());
      }
    });
    return Status::ok();
  }

 private:
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
};

}  // namespace

std::unique_ptr<ConvKernel> make_depthwise_conv(const pock_op_desc& op, const ConvGeometry& g, KernelScope&,
                                                Status* status) {
  *status = Status::ok();
  if (!g.is_depthwise()) return nullptr;
  auto conv = std::unique_ptr<ConvKernel>(new (std::nothrow) DepthwiseConv(g, op.num_threads));
  if (!conv) *status = Status(Code::kOutOfMemory, "Conv2d depthwise state");
  return conv;
}

}  // namespace pock::cpu
