// Depthwise Conv2d gradients (depth multiplier 1) onto small planes, channels-last inside the
// kernel (depthwise_channels_last.hpp): dy (and x) are copied to NHWC in scratch, the taps run
// with the channels as the vector lanes, and dx is copied back to NCHW. The plane-wise loops
// (conv_grad_depthwise.cpp) vectorize over a plane's pixels; on MobileNetV2's late layers (4x4
// and 8x8 planes of 384-960 channels) that is one or four vectors per plane, so the per-plane
// setup (a zero-margined copy, the tap list, the write-back) costs more than the arithmetic. Here
// a plane of any size is C lanes wide and the setup is two tiled transposes per op (layout.cpp). On MobileNetV2's 960-channel 4x4 layers at
// batch 8 (one core of an AVX2 AMD EPYC): input gradient 0.81-0.87 -> 0.13-0.14 ms, weight
// gradient 0.44-0.47 -> 0.14-0.15 ms.
//   dx[n, iy, ix, c] = sum over the taps (ky, kx) that reach it from an output pixel (oy, ox)
//                      of w[c, ky, kx] * dy[n, oy, ox, c]
//   dw[c, ky, kx]    = sum over n, (oy, ox) of x[n, iy, ix, c] * dy[n, oy, ox, c]
// Products of one image are summed in f32 lanes and images added in double, as the plane-wise
// loops do, so long batches stay exact.
#include <algorithm>
#include <atomic>
#include <new>

#include "kernels/cpu/conv_grad_kernel.hpp"
#include "kernels/cpu/cpu_util.hpp"
#include "kernels/cpu/depthwise_channels_last.hpp"
#include "kernels/cpu/layout.hpp"
#include "kernels/cpu/simd.hpp"
#include "kernels/cpu/thread_pool.hpp"

namespace pock::cpu {
namespace {

std::atomic<int> made{0};

// Channels per task of the weight gradient: a block of every tap's sums stays in L1.
constexpr int64_t kChannelBlock = 64;

int64_t taps(const ConvGeometry& g) { return g.kernel_h * g.kernel_w; }

// sums[tap * channels + c] += the tap's weight gradient for c in [c_begin, c_end), over the batch;
// partial: one tap row of one image's f32 sums, C floats.
POCK_SIMD_CLONES void weight_block(const ConvGeometry& g, const float* x_t, const float* dy_t, int64_t c_begin,
                                   int64_t c_end, float* partial, double* sums) {
  const int64_t c_count = g.in_channels, width = c_end - c_begin;
  for (int64_t n = 0; n < g.batch; ++n) {
    for (int64_t ky = 0; ky < g.kernel_h; ++ky) {
      for (int64_t kx = 0; kx < g.kernel_w; ++kx) {
#pragma omp simd
        for (int64_t c = 0; c < width; ++c) partial[c] = 0.0f;
        for (int64_t oy = 0; oy < g.out_h; ++oy) {
          const int64_t iy = tap_row(g, oy, ky);
          if (iy < 0) continue;
          for (int64_t ox = 0; ox < g.out_w; ++ox) {
            const int64_t ix = ox * g.stride_w - g.pad_left + kx * g.dilation_w;
            if (ix < 0 || ix >= g.in_w) continue;
            const float* xs = x_t + ((n * g.in_h + iy) * g.in_w + ix) * c_count + c_begin;
            const float* ds = dy_t + ((n * g.out_h + oy) * g.out_w + ox) * c_count + c_begin;
#pragma omp simd
            for (int64_t c = 0; c < width; ++c) partial[c] += xs[c] * ds[c];
          }
        }
        double* s = sums + (ky * g.kernel_w + kx) * c_count + c_begin;
#pragma omp simd
        for (int64_t c = 0; c < width; ++c) s[c] += static_cast<double>(partial[c]);
      }
    }
  }
}

class ChannelsLastDepthwiseGradInput final : public ChannelsLastDepthwiseKernel {
 public:
  using ChannelsLastDepthwiseKernel::ChannelsLastDepthwiseKernel;

  Status init() { return reserve(out_floats() + in_floats() + weight_floats(), "depthwise dx scratch"); }

  Status run(const KernelCall& c) override {
    const float* dy = c.in_data<float>(0);
    const float* w = c.in_data<float>(1);
    float* dx = c.out_data<float>(0);
    float* dy_t = scratch();
    float* dx_t = dy_t + out_floats();
    float* w_t = dx_t + in_floats();
    const int64_t channels = g_.in_channels;
    depthwise_weight_by_tap(w, channels, taps(g_), w_t);
    nchw_to_nhwc(dy, dy_t, g_.batch, channels, g_.out_plane(), pool_);
    const size_t rows = static_cast<size_t>(g_.batch * g_.in_h);
    parallel_for(pool_, rows, balanced_tile(pool_, rows, 1), [&](size_t begin, size_t end) {
      depthwise_tap_sums(g_, true, dy_t, w_t, dx_t, static_cast<int64_t>(begin), static_cast<int64_t>(end));
    });
    nhwc_to_nchw(dx_t, nullptr, dx, g_.batch, channels, g_.in_plane(), pool_);
    return Status::ok();
  }
};

// dw holds the leading `channels` output channels (a partially trained weight), but the copies
// take every channel: a tiled transpose of whole images is cheaper than a strided one.
class ChannelsLastDepthwiseGradWeight final : public ChannelsLastDepthwiseKernel {
 public:
  ChannelsLastDepthwiseGradWeight(const ConvGeometry& g, int32_t num_threads, KernelScope& scope, int64_t channels)
      : ChannelsLastDepthwiseKernel(g, num_threads, scope),
        channels_(channels),
        sums_(new (std::nothrow) double[static_cast<size_t>(taps(g) * g.in_channels)]),
        partials_(new (std::nothrow) float[static_cast<size_t>(blocks() * kChannelBlock)]) {}

  Status init() {
    if (!sums_ || !partials_) return Status(Code::kOutOfMemory, "depthwise dw sums");
    return reserve(in_floats() + out_floats(), "depthwise dw scratch");
  }

  Status run(const KernelCall& c) override {
    const float* x = c.in_data<float>(0);
    const float* dy = c.in_data<float>(1);
    float* dw = c.out_data<float>(0);
    float* x_t = scratch();
    float* dy_t = x_t + in_floats();
    const int64_t all = g_.in_channels, k = taps(g_);
    nchw_to_nhwc(x, x_t, g_.batch, all, g_.in_plane(), pool_);
    nchw_to_nhwc(dy, dy_t, g_.batch, all, g_.out_plane(), pool_);
    std::fill(sums_.get(), sums_.get() + k * all, 0.0);
    const size_t count = static_cast<size_t>(blocks());
    parallel_for(pool_, count, 1, [&](size_t begin, size_t end) {
      for (size_t b = begin; b < end; ++b) {
        const int64_t c0 = static_cast<int64_t>(b) * kChannelBlock, c1 = std::min(channels_, c0 + kChannelBlock);
        weight_block(g_, x_t, dy_t, c0, c1, partials_.get() + c0, sums_.get());
      }
    });
    for (int64_t o = 0; o < channels_; ++o) {
      for (int64_t t = 0; t < k; ++t) dw[o * k + t] = static_cast<float>(sums_[static_cast<size_t>(t * all + o)]);
    }
    return Status::ok();
  }

 private:
  int64_t blocks() const { return (channels_ + kChannelBlock - 1) / kChannelBlock; }

  int64_t channels_;
  std::unique_ptr<double[]> sums_;
  std::unique_ptr<float[]> partials_;  // per block, so that tasks share nothing
};

}  // namespace

std::unique_ptr<ConvKernel> make_channels_last_depthwise_grad_input(const pock_op_desc& op, const ConvGeometry& g,
                                                                    KernelScope& scope, Status* status) {
  *status = Status::ok();
  if (!channels_last_depthwise_takes(g)) return nullptr;
  return make_channels_last_kernel<ChannelsLastDepthwiseGradInput>(op, made, status, g, op.num_threads, scope);
}

std::unique_ptr<ConvKernel> make_channels_last_depthwise_grad_weight(const pock_op_desc& op, const ConvGeometry& g,
                                                                     int64_t channels, KernelScope& scope,
                                                                     Status* status) {
  *status = Status::ok();
  if (!channels_last_depthwise_takes(g)) return nullptr;
  return make_channels_last_kernel<ChannelsLastDepthwiseGradWeight>(op, made, status, g, op.num_threads, scope,
                                                                    channels);
}

namespace depthwise_channels_last_testing {
int gradient_kernels_made() { return made.load(); }
}  // namespace depthwise_channels_last_testing

}  // namespace pock::cpu
