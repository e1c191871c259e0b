// What the channels-last depthwise kernels (conv_depthwise_nhwc.cpp, conv_grad_depthwise_nhwc.cpp)
// share: which layers they take, and the weight with the taps as rows and the channels as lanes.
// They copy NCHW tensors to NHWC in scratch (layout.hpp), run with the channels as the vector
// lanes, and copy back; on small planes that beats NCHW loops whose vectors are a plane's few
// pixels.
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <new>
#include <string>
#include <utility>

#include "kernels/cpu/conv_geometry.hpp"
#include "kernels/cpu/conv_kernel.hpp"
#include "kernels/cpu/depthwise_vector_rows.hpp"
#include "kernels/cpu/thread_pool.hpp"
#include "runtime/kernel_scope.hpp"

namespace pock::cpu {

// Layers whose output planes have at most 64 pixels (and input planes at most 256): MobileNetV2's
// 8x8 and 4x4 layers at 128x128 and the stride-2 one into them. On larger planes the NCHW loops'
// vectors are full and the two transposes cost more than they save. Input gradients of
// MobileNetV2's sparse step, NCHW loops -> channels-last (one core of an AVX2 AMD EPYC, batch 8,
// per-op minimum over two sets of 6 and 10 `pockc bench --per-op` runs on a shared two-core
// machine, noise about 15 %): 144 channels at 32x32 1.51 -> 4.06 ms, 192 at 16x16 0.53 -> 0.56 ms;
// 192 at 16x16 stride 2 into 8x8 0.37 -> 0.29-0.35 ms; 384-576 at 8x8 0.49-0.76 -> 0.22-0.50 ms;
// 576 at 8x8 stride 2 into 4x4 0.71 -> 0.19-0.22 ms; 960 at 4x4 0.81-0.87 -> 0.13-0.14 ms.
// Layers the NCHW vector planes take (depthwise_vector_rows.hpp: the 8x8 stride-1 layers and the
// stride-2 one into them) stay with those, forward and both gradients, which beat the
// channels-last copies 2-3x there (weight gradient, 576 channels at 8x8: 0.85-0.98 -> 0.36-0.38 ms
// in MobileNetV2's full step).
inline bool channels_last_depthwise_takes(const ConvGeometry& g) {
  constexpr int64_t kMaxOutPlane = 64, kMaxInPlane = 256;
  return g.is_depthwise() && g.out_per_group() == 1 && g.in_plane() <= kMaxInPlane &&
         g.out_plane() <= kMaxOutPlane && !depthwise_vector_rows_take(g);
}

// w_t[tap * channels + c] = w[c * taps + tap]: a [C, 1, kh, kw] weight as [kh * kw, C].
inline void depthwise_weight_by_tap(const float* w, int64_t channels, int64_t taps, float* w_t) {
  for (int64_t c = 0; c < channels; ++c) {
    for (int64_t t = 0; t < taps; ++t) w_t[t * channels + c] = w[c * taps + t];
  }
}

// dst rows [row_begin, row_end) of the batch (row = n * height + y), every column and channel, in
// NHWC: each pixel sums its taps' weights (w_t, depthwise_weight_by_tap) times the source pixels.
// Forward: dst is y, src is x, and a tap reads the input pixel it covers. Input gradient: dst is dx,
// src is dy, and a tap reads the output pixel whose window puts it on this pixel (none when the
// stride skips it). depthwise_channels_last.cpp.
void depthwise_tap_sums(const ConvGeometry& g, bool input_gradient, const float* src, const float* w_t, float* dst,
                        int64_t row_begin, int64_t row_end);

// What the channels-last kernels hold: the shape, the pool, and the NHWC copies in the engine's one
// scratch region (reserved at prepare), one after the other.
class ChannelsLastDepthwiseKernel : public ConvKernel {
 public:
  ChannelsLastDepthwiseKernel(const ConvGeometry& g, int32_t num_threads, KernelScope& scope)
      : g_(g), pool_(thread_pool_for(num_threads)), scope_(&scope) {}

 protected:
  // The floats of one NHWC copy: x or dx, y or dy, the weight by tap.
  int64_t in_floats() const { return g_.batch * g_.in_plane() * g_.in_channels; }
  int64_t out_floats() const { return g_.batch * g_.out_plane() * g_.in_channels; }
  int64_t weight_floats() const { return g_.kernel_h * g_.kernel_w * g_.in_channels; }

  Status reserve(int64_t floats, const char* what) {
    return scope_->reserve_scratch(static_cast<size_t>(floats) * sizeof(float), what);
  }
  // Read at run time: the region may move while later ops are prepared.
  float* scratch() const { return reinterpret_cast<float*>(scope_->scratch()); }

  ConvGeometry g_;
  pthreadpool_t pool_;

 private:
  KernelScope* scope_;
};

// A Kernel built from `args` and its init() (the scratch reservation); nullptr with the error when
// either fails. `made` counts the kernels made (depthwise_channels_last_testing).
template <typename Kernel, typename... Args>
std::unique_ptr<ConvKernel> make_channels_last_kernel(const pock_op_desc& op, std::atomic<int>& made, Status* status,
                                                      Args&&... args) {
  std::unique_ptr<Kernel> kernel(new (std::nothrow) Kernel(std::forward<Args>(args)...));
  if (!kernel) {
    *status = Status(Code::kOutOfMemory, std::string(op.op) + " channels-last depthwise state");
    return nullptr;
  }
  *status = kernel->init();
  if (!status->is_ok()) return nullptr;
  ++made;
  return kernel;
}

// Tests count the kernels made, to know that a shape ran channels-last.
namespace depthwise_channels_last_testing {
int forward_kernels_made();   // conv_depthwise_nhwc.cpp
int gradient_kernels_made();  // conv_grad_depthwise_nhwc.cpp: input and weight gradients
}  // namespace depthwise_channels_last_testing

}  // namespace pock::cpu
