// Depthwise Conv2d gradients (one input channel per group, any depth multiplier) directly on
// NCHW, the adjoints of conv_depthwise.cpp's loops. Per filter tap and output row:
//   dx: the input row gets w * the dy row added at the tap's offset (a scatter when strided)
//   dw: the tap's weight gradient gains the dot product of the input row and the dy row
// Rows are clipped once per tap to the columns that read no padding (tap_columns), so the inner
// loops have no bounds checks and vectorize. No scratch, no library. The traversal is shared with
// kernels/neon, which brings its own two inner loops (DepthwiseGradLoops).
#include <algorithm>
#include <new>

#include "kernels/cpu/conv_grad_kernel.hpp"
#include "kernels/cpu/cpu_util.hpp"
#include "kernels/cpu/simd.hpp"
#include "kernels/cpu/thread_pool.hpp"

namespace pock::cpu {
namespace {

// y[i * stride] += w * x[i] for i in [0, n).
POCK_SIMD_CLONES void scatter_scaled(float w, const float* x, float* y, int64_t stride, int64_t n) {
  if (stride == 1) {
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) y[i] += w * x[i];
  } else {
    for (int64_t i = 0; i < n; ++i) y[i * stride] += w * x[i];
  }
}

// sum x[i * stride] * y[i] for i in [0, n).
POCK_SIMD_CLONES float strided_dot(const float* x, int64_t stride, const float* y, int64_t n) {
  float sum = 0.0f;
  if (stride == 1) {
#pragma omp simd reduction(+ : sum)
    for (int64_t i = 0; i < n; ++i) sum += x[i] * y[i];
  } else {
#pragma omp simd reduction(+ : sum)
    for (int64_t i = 0; i < n; ++i) sum += x[i * stride] * y[i];
  }
  return sum;
}

int64_t taps(const ConvGeometry& g) { return g.kernel_h * g.kernel_w; }

const DepthwiseGradLoops kCpuLoops{scatter_scaled, strided_dot};

// dx: one task per input plane (n, c); the plane sums the taps of every output channel of c.
class DepthwiseConvGradInput final : public ConvKernel {
 public:
  DepthwiseConvGradInput(const ConvGeometry& g, int32_t num_threads, const DepthwiseGradLoops& loops)
      : g_(g), pool_(thread_pool_for(num_threads)), loops_(loops) {}

  Status run(const KernelCall& c) override {
    const float* dy = c.in_data<float>(0);
    const float* w = c.in_data<float>(1);
    float* dx = c.out_data<float>(0);
    const size_t planes = static_cast<size_t>(g_.batch * g_.in_channels);
    const int64_t multiplier = g_.out_per_group();
    parallel_for(pool_, planes, balanced_tile(pool_, planes, 1), [&](size_t begin, size_t end) {
      for (size_t p = begin; p < end; ++p) {
        const int64_t n = static_cast<int64_t>(p) / g_.in_channels, ch = static_cast<int64_t>(p) % g_.in_channels;
        float* plane = dx + static_cast<int64_t>(p) * g_.in_plane();
        std::fill(plane, plane + g_.in_plane(), 0.0f);
        for (int64_t o = ch * multiplier; o < (ch + 1) * multiplier; ++o) {
          add_output_channel(dy + (n * g_.out_channels + o) * g_.out_plane(), w + o * taps(g_), plane);
        }
      }
    });
    return Status::ok();
  }

 private:
  void add_output_channel(const float* dy, const float* w, float* dx) const {
    for (int64_t kx = 0; kx < g_.kernel_w; ++kx) {
      const TapColumns t = tap_columns(g_, kx);
      if (t.begin >= t.end) continue;
      for (int64_t ky = 0; ky < g_.kernel_h; ++ky) {
        const float weight = w[ky * g_.kernel_w + kx];
        for (int64_t oy = 0; oy < g_.out_h; ++oy) {
          const int64_t iy = tap_row(g_, oy, ky);
          if (iy < 0) continue;
          loops_.scatter_scaled(weight, dy + oy * g_.out_w + t.begin,
                                dx + iy * g_.in_w + t.begin * g_.stride_w + t.shift, g_.stride_w, t.end - t.begin);
        }
      }
    }
  }

  ConvGeometry g_;
  pthreadpool_t pool_;
  DepthwiseGradLoops loops_;
};

// dw: one task per output channel; each tap is a sum of row dot products over the batch.
class DepthwiseConvGradWeight final : public ConvKernel {
 public:
  DepthwiseConvGradWeight(const ConvGeometry& g, int32_t num_threads, const DepthwiseGradLoops& loops, int64_t channels)
      : g_(g), pool_(thread_pool_for(num_threads)), loops_(loops), channels_(channels) {}

  Status run(const KernelCall& c) override {
    const float* x = c.in_data<float>(0);
    const float* dy = c.in_data<float>(1);
    float* dw = c.out_data<float>(0);
    const size_t channels = static_cast<size_t>(channels_);
    parallel_for(pool_, channels, balanced_tile(pool_, channels, 1), [&](size_t begin, size_t end) {
      for (size_t o = begin; o < end; ++o) channel_taps(x, dy, static_cast<int64_t>(o), dw + o * taps(g_));
    });
    return Status::ok();
  }

 private:
  void channel_taps(const float* x, const float* dy, int64_t o, float* dw) const {
    const int64_t ch = o / g_.out_per_group();
    for (int64_t ky = 0; ky < g_.kernel_h; ++ky) {
      for (int64_t kx = 0; kx < g_.kernel_w; ++kx) {
        const TapColumns t = tap_columns(g_, kx);
        double sum = 0.0;  // rows summed in f32 lanes, rows added in double: long batches stay exact
        for (int64_t n = 0; t.begin < t.end && n < g_.batch; ++n) {
          const float* x_plane = x + (n * g_.in_channels + ch) * g_.in_plane();
          const float* dy_plane = dy + (n * g_.out_channels + o) * g_.out_plane();
          for (int64_t oy = 0; oy < g_.out_h; ++oy) {
            const int64_t iy = tap_row(g_, oy, ky);
            if (iy < 0) continue;
            sum += loops_.strided_dot(x_plane + iy * g_.in_w + t.begin * g_.stride_w + t.shift, g_.stride_w,
                                      dy_plane + oy * g_.out_w + t.begin, t.end - t.begin);
          }
        }
        dw[ky * g_.kernel_w + kx] = static_cast<float>(sum);
      }
    }
  }

  ConvGeometry g_;
  pthreadpool_t pool_;
  DepthwiseGradLoops loops_;
  int64_t channels_;
};

template <typename Kernel, typename... Args>
std::unique_ptr<ConvKernel> make(const pock_op_desc& op, const ConvGeometry& g, Status* status, Args... args) {
  *status = Status::ok();
  if (!g.is_depthwise()) return nullptr;
  auto kernel = std::unique_ptr<ConvKernel>(new (std::nothrow) Kernel(g, op.num_threads, args...));
  if (!kernel) *status = Status(Code::kOutOfMemory, std::string(op.op) + " depthwise state");
  return kernel;
}

}  // namespace

const DepthwiseGradLoops& cpu_depthwise_grad_loops() { return kCpuLoops; }

std::unique_ptr<ConvKernel> make_depthwise_conv_grad_input(const pock_op_desc& op, const ConvGeometry& g,
                                                           const DepthwiseGradLoops& loops, Status* status) {
  return make<DepthwiseConvGradInput>(op, g, status, loops);
}

std::unique_ptr<ConvKernel> make_depthwise_conv_grad_weight(const pock_op_desc& op, const ConvGeometry& g,
                                                            int64_t channels, const DepthwiseGradLoops& loops,
                                                            Status* status) {
  return make<DepthwiseConvGradWeight>(op, g, status, loops, channels);
}

}  // namespace pock::cpu
