// The cpu backend's ways to run Conv2d's input and weight gradients. conv_grad.cpp picks one per
// op at prepare, like conv.cpp does for the forward op; each is built with its scratch reserved so
// that run() never allocates.
//   depthwise — one input channel per group: direct loops over NCHW, no library; on small planes
//               the same sums channels-last in scratch
//   xnnpack   — the input gradient of a frozen weight, where measured faster: a deconvolution
//               (conv_grad_xnnpack.hpp; the weight is packed once, it cannot change)
//   gemm      — anything else: im2col / col2im around OpenBLAS sgemm
// The depthwise and gemm ways read w, x and dy on every run: nothing is packed that training
// could change.
#pragma once
#include <memory>

#include "kernels/cpu/conv_grad_geometry.hpp"
#include "kernels/cpu/conv_kernel.hpp"

namespace pock::cpu {

// The per-plane work of the depthwise gradients, so that a backend with its own vector code
// (kernels/neon) reuses the kernels' split over threads and supplies only these. A whole plane
// per call, not a row: MobileNet's late layers have 4x4 planes, where a call per row cost more
// than its arithmetic.
struct DepthwiseGradLoops {
  // dx: one input plane of the image and channel; dy: that image's out_per_group() consecutive
  // planes of the channel's output channels; w: their out_per_group() * kh * kw taps.
  // Overwrites the dx plane.
  void (*input_plane)(const ConvGeometry& g, const float* dy, const float* w, float* dx);
  // sums[ky * kw + kx] += the tap's weight gradient from one image: x is the input plane, dy the
  // output channel's plane.
  void (*weight_plane)(const ConvGeometry& g, const float* x, const float* dy, double* sums);
};
const DepthwiseGradLoops& cpu_depthwise_grad_loops();

// The row-at-a-time traversal of the two planes (per tap and output row, clipped once per tap to
// the columns that read no padding), for a backend that brings only two row loops:
//   scatter(w, x, y, stride, n): y[i * stride] += w * x[i] for i in [0, n)
//   dot(x, stride, y, n):        the sum of x[i * stride] * y[i] for i in [0, n), as float
// Calls f(tap, in_offset, out_offset, n) for every (tap, output row) pair: the tap ky * kw + kx
// reads input elements in_offset + i * stride_w against output elements out_offset + i of the
// plane, for i in [0, n), with the columns that would read padding clipped once per tap.
template <typename F>
inline void for_each_tap_row(const ConvGeometry& g, F&& f) {
  for (int64_t kx = 0; kx < g.kernel_w; ++kx) {
    const TapColumns t = tap_columns(g, kx);
    if (t.begin >= t.end) continue;
    for (int64_t ky = 0; ky < g.kernel_h; ++ky) {
      for (int64_t oy = 0; oy < g.out_h; ++oy) {
        const int64_t iy = tap_row(g, oy, ky);
        if (iy < 0) continue;
        f(ky * g.kernel_w + kx, iy * g.in_w + t.begin * g.stride_w + t.shift, oy * g.out_w + t.begin, t.end - t.begin);
      }
    }
  }
}

template <typename Scatter>
inline void depthwise_input_plane_by_rows(const ConvGeometry& g, const float* dy, const float* w, float* dx,
                                          Scatter scatter) {
  for (int64_t i = 0; i < g.in_plane(); ++i) dx[i] = 0.0f;
  for (int64_t m = 0; m < g.out_per_group(); ++m) {
    const float* dym = dy + m * g.out_plane();
    const float* wm = w + m * g.kernel_h * g.kernel_w;
    for_each_tap_row(g, [&](int64_t tap, int64_t in, int64_t out, int64_t n) {
      scatter(wm[tap], dym + out, dx + in, g.stride_w, n);
    });
  }
}

template <typename Dot>
inline void depthwise_weight_plane_by_rows(const ConvGeometry& g, const float* x, const float* dy, double* sums,
                                           Dot dot) {
  // Rows summed in f32 lanes, rows added in double: long batches stay exact.
  for_each_tap_row(g, [&](int64_t tap, int64_t in, int64_t out, int64_t n) {
    sums[tap] += dot(x + in, g.stride_w, dy + out, n);
  });
}

// Each returns nullptr with an OK status when it cannot run this op, so that the caller can try
// the next way; an error status is a real failure (out of memory).
std::unique_ptr<ConvKernel> make_depthwise_conv_grad_input(const pock_op_desc& op, const ConvGeometry& g,
                                                           const DepthwiseGradLoops& loops, Status* status);
std::unique_ptr<ConvKernel> make_depthwise_conv_grad_weight(const pock_op_desc& op, const ConvGeometry& g,
                                                            int64_t channels, const DepthwiseGradLoops& loops,
                                                            Status* status);
// Depthwise layers (depth multiplier 1) of small planes: channels-last in scratch, the channels as
// vector lanes (conv_grad_depthwise_nhwc.cpp). nullptr with an OK status for any other shape.
std::unique_ptr<ConvKernel> make_channels_last_depthwise_grad_input(const pock_op_desc& op, const ConvGeometry& g,
                                                                    KernelScope& scope, Status* status);
std::unique_ptr<ConvKernel> make_channels_last_depthwise_grad_weight(const pock_op_desc& op, const ConvGeometry& g,
                                                                     int64_t channels, KernelScope& scope,
                                                                     Status* status);
// The gemm way's column scratch is the backend instance's shared region (runtime/kernel_scope.hpp).
std::unique_ptr<ConvKernel> make_gemm_conv_grad_input(const pock_op_desc& op, const ConvGeometry& g, KernelScope& scope,
                                                      Status* status);
std::unique_ptr<ConvKernel> make_gemm_conv_grad_weight(const pock_op_desc& op, const ConvGeometry& g, int64_t channels,
                                                       KernelScope& scope, Status* status);

// Whether the gemm way is compiled in (it needs OpenBLAS).
bool gemm_conv_grad_available();

// The cpu kernel of Conv2dGradInput (dy, w) -> dx, registered under `op`: layer_grad_conv/
// conv_grad.cpp's, and conv/conv_transpose2d.cpp's ConvTranspose2d (x, w) -> y, the same
// transposed convolution.
KernelDef conv_grad_input_def(const char* op);

}  // namespace pock::cpu
