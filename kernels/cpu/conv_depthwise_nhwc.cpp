// Depthwise Conv2d (depth multiplier 1) onto small planes, channels-last inside the kernel
// (depthwise_channels_last.hpp): x is copied to NHWC in scratch, every output pixel sums its taps
// with the channels as the vector lanes, and the copy back to NCHW adds the bias and applies the
// fused activation (layout.hpp). The NCHW row loops (conv_depthwise.cpp) vectorize along a row of
// 4 or 8 outputs on MobileNetV2's late layers; XNNPACK, which is channels-last too, takes only a
// frozen weight, so this is the way for a trained one there.
//   y[n, oy, ox, c] = sum over the taps (ky, kx) inside the input of w[c, ky, kx] * x[n, iy, ix, c]
#include <atomic>

#include "kernels/cpu/conv_kernel.hpp"
#include "kernels/cpu/depthwise_channels_last.hpp"
#include "kernels/cpu/layout.hpp"
#include "kernels/cpu/thread_pool.hpp"

namespace pock::cpu {
namespace {

std::atomic<int> made{0};

class ChannelsLastDepthwiseConv final : public ChannelsLastDepthwiseKernel {
 public:
  using ChannelsLastDepthwiseKernel::ChannelsLastDepthwiseKernel;

  Status init() { return reserve(in_floats() + out_floats() + weight_floats(), "depthwise scratch"); }

  Status run(const KernelCall& c) override {
    const float* x = c.in_data<float>(0);
    const float* w = c.in_data<float>(1);
    const float* bias = g_.has_bias ? c.in_data<float>(2) : nullptr;
    float* y = c.out_data<float>(0);
    float* x_t = scratch();
    float* y_t = x_t + in_floats();
    float* w_t = y_t + out_floats();
    depthwise_weight_by_tap(w, g_.in_channels, g_.kernel_h * g_.kernel_w, w_t);
    nchw_to_nhwc(x, x_t, g_.batch, g_.in_channels, g_.in_plane(), pool_);
    const size_t rows = static_cast<size_t>(g_.batch * g_.out_h);
    parallel_for(pool_, rows, balanced_tile(pool_, rows, 1), [&](size_t begin, size_t end) {
      depthwise_tap_sums(g_, false, x_t, w_t, y_t, static_cast<int64_t>(begin), static_cast<int64_t>(end));
    });
    nhwc_to_nchw(y_t, bias, y, g_.batch, g_.out_channels, g_.out_plane(), pool_, g_.activation);
    return Status::ok();
  }
};

}  // namespace

std::unique_ptr<ConvKernel> make_channels_last_depthwise_conv(const pock_op_desc& op, const ConvGeometry& g,
                                                              KernelScope& scope, Status* status) {
  *status = Status::ok();
  if (!channels_last_depthwise_takes(g)) return nullptr;
  return make_channels_last_kernel<ChannelsLastDepthwiseConv>(op, made, status, g, op.num_threads, scope);
}

namespace depthwise_channels_last_testing {
int forward_kernels_made() { return made.load(); }
}  // namespace depthwise_channels_last_testing

}  // namespace pock::cpu
