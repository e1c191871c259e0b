// A channels-last 1x1 convolution (layout "NHWC"; stride 1, unpadded, one group) as one GEMM over
// the whole batch: x [N*H*W, C] and y [N*H*W, O] are row-major matrices, so y = x wᵀ with the OIHW
// weight read in place as [O, C] (frozen or trainable: nothing is packed), through OpenBLAS. The
// compiler's layout pass makes frozen forward chains channels-last; their pointwise layers used
// to go to XNNPACK alone, which on one core of an AVX2 AMD EPYC ran them at a third of sgemm's
// speed (EfficientNet-Lite0 at 64 pixels, batch 16: 240 -> 40 at 8x8 0.71 against 0.23 ms).
// Rows go in blocks, each block's bias and activation applied while it is still in cache.
#include "kernels/cpu/conv_pointwise_nhwc.hpp"

#include <algorithm>
#include <atomic>
#include <new>

#ifdef POCK_HAVE_OPENBLAS
#include "kernels/cpu/activation_epilogue.hpp"
#include "kernels/cpu/blas.hpp"
#include "kernels/cpu/parallel_sgemm.hpp"
#include "kernels/cpu/thread_pool.hpp"
#endif

namespace pock::cpu {
namespace {

std::atomic<int> made{0};

#ifdef POCK_HAVE_OPENBLAS
// Rows of y per GEMM call: a block of y (at most 256 x O floats) stays in L2 for its epilogue.
constexpr int64_t kBlockRows = 256;

class PointwiseNhwcConv final : public ConvKernel {
 public:
  PointwiseNhwcConv(const ConvGeometry& g, int32_t num_threads) : g_(g), pool_(thread_pool_for(num_threads)) {}

  Status run(const KernelCall& c) override {
    const float* x = c.in_data<float>(0);
    const float* w = c.in_data<float>(1);
    const float* bias = g_.has_bias ? c.in_data<float>(2) : nullptr;
    float* y = c.out_data<float>(0);
    const int64_t rows = g_.batch * g_.out_plane(), in = g_.in_channels, out = g_.out_channels;
    const bool epilogue = bias != nullptr || g_.activation != Activation::kNone;
    for (int64_t r = 0; r < rows; r += kBlockRows) {
      const int64_t block = std::min(kBlockRows, rows - r);
      parallel_sgemm(pool_, {false, true, block, out, in, 1.0f, x + r * in, in, w, in, 0.0f, y + r * out, out});
      if (epilogue) apply_bias_activation_rows(y + r * out, bias, g_.activation, block, out);
    }
    return Status::ok();
  }

 private:
  ConvGeometry g_;
  pthreadpool_t pool_;
};
#endif

}  // namespace

bool pointwise_nhwc_takes(const ConvGeometry& g) {
  return g.kernel_h == 1 && g.kernel_w == 1 && g.stride_h == 1 && g.stride_w == 1 && g.pad_top == 0 &&
         g.pad_left == 0 && g.pad_bottom == 0 && g.pad_right == 0 && g.groups == 1 && !g.bf16;
}

std::unique_ptr<ConvKernel> make_pointwise_nhwc_conv(const pock_op_desc& op, const ConvGeometry& g, KernelScope&,
                                                     Status* status) {
  *status = Status::ok();
#ifdef POCK_HAVE_OPENBLAS
  if (!pointwise_nhwc_takes(g) || !fits_blas_int(g.batch * g.out_plane()) || !fits_blas_int(g.in_channels) ||
      !fits_blas_int(g.out_channels)) {
    return nullptr;
  }
  auto kernel = std::unique_ptr<PointwiseNhwcConv>(new (std::nothrow) PointwiseNhwcConv(g, op.num_threads));
  if (!kernel) {
    *status = Status(Code::kOutOfMemory, "Conv2d NHWC pointwise state");
    return nullptr;
  }
  configure_blas_threads(op.num_threads);
  ++made;
  return kernel;
#else
  (void)op;
  (void)g;
  return nullptr;
#endif
}

bool pointwise_nhwc_preferred(const ConvGeometry& g) { return pointwise_nhwc_takes(g) && g.in_channels >= 32; }

bool pointwise_nhwc_available() {
#ifdef POCK_HAVE_OPENBLAS
  return true;
#else
  return false;
#endif
}

namespace conv_pointwise_nhwc_testing {
int kernels_made() { return made.load(); }
}  // namespace conv_pointwise_nhwc_testing

}  // namespace pock::cpu
