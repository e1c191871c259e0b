// A channels-last 1x1 convolution (layout "NHWC"; stride 1, unpadded, one group) over the whole
// batch at once: x [N*H*W, C] and y [N*H*W, O] are row-major matrices, so y = x wᵀ. The compiler's
// layout pass makes frozen forward chains channels-last; their pointwise layers used to go to
// XNNPACK alone, which on one core of an AVX2 AMD EPYC ran them at a third of sgemm's speed
// (EfficientNet-Lite0 at 64 pixels, batch 16: 240 -> 40 at 8x8 0.71 against 0.23 ms). Two ways:
//   - 32 or more channels: OpenBLAS's sgemm with the OIHW weight read in place as [O, C];
//   - fewer: short_product.hpp's register tiles (ShortNhwcConv below), which beat XNNPACK on
//     MobileNetV2's expansions (24 -> 144 at 32x32, batch 8: 1.52 -> 1.15 ms) where sgemm lost.
// Rows go in blocks, each block's bias and activation applied while it is still in cache.
#include "kernels/cpu/conv_pointwise_nhwc.hpp"

#include <algorithm>
#include <atomic>
#include <new>

#ifdef POCK_HAVE_OPENBLAS
#include "kernels/cpu/blas.hpp"
#include "kernels/cpu/parallel_sgemm.hpp"
#endif
#include "kernels/cpu/activation_epilogue.hpp"
#include "kernels/cpu/conv_pointwise.hpp"
#include "kernels/cpu/cpu_util.hpp"
#include "kernels/cpu/short_product.hpp"
#include "kernels/cpu/thread_pool.hpp"
#include "runtime/mapped_file.hpp"

namespace pock::cpu {
namespace {

std::atomic<int> made{0};
std::atomic<int> made_short{0};

#ifdef POCK_HAVE_OPENBLAS
// Rows of y per GEMM call: a block of y (at most 256 x O floats) stays in L2 for its epilogue.
constexpr int64_t kGemmBlockRows = 256;

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
    for (int64_t r = 0; r < rows; r += kGemmBlockRows) {
      const int64_t block = std::min(kGemmBlockRows, rows - r);
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

// A short reduction (fewer than 32 channels: an expansion 16 -> 96) leaves sgemm around its
// multiply-adds; there the rows of x are the A operand of short_product.hpp's register tiles, read
// in place (A(m, k) = x[m * C + k]), against the weight transposed to [C, O], so each tile of 6
// pixels x 16 output channels takes the whole reduction and is stored once. Tasks take blocks of
// rows and apply the bias and activation to each while it is in cache.
class ShortNhwcConv final : public ConvKernel {
 public:
  ShortNhwcConv(const ConvGeometry& g, int32_t num_threads, KernelScope& scope)
      : g_(g), pool_(thread_pool_for(num_threads)), scope_(&scope) {}

  // A constant weight is transposed once, here; a fed one on every run, into the scratch region.
  Status init(const pock_tensor_desc& w) {
    const size_t bytes = static_cast<size_t>(g_.in_channels * g_.out_channels) * sizeof(float);
    if (!is_constant(w)) return scope_->reserve_scratch(bytes, "Conv2d NHWC short-reduction weight");
    POCK_RETURN_IF_ERROR(frozen_.allocate(bytes, "Conv2d NHWC short-reduction weight"));
    transpose_weight(static_cast<const float*>(w.data), reinterpret_cast<float*>(frozen_.data()));
    return Status::ok();
  }

  Status run(const KernelCall& c) override {
    const float* x = c.in_data<float>(0);
    const float* bias = g_.has_bias ? c.in_data<float>(2) : nullptr;
    float* y = c.out_data<float>(0);
    const float* w_t = reinterpret_cast<const float*>(frozen_.data());
    if (!w_t) {
      float* scratch = reinterpret_cast<float*>(scope_->scratch());
      transpose_weight(c.in_data<float>(1), scratch);
      w_t = scratch;
    }
    const int64_t in = g_.in_channels, out = g_.out_channels, rows = g_.batch * g_.out_plane();
    const Clamp clamp = clamp_of(g_.activation);
    const auto blocks = static_cast<size_t>((rows + kTileBlockRows - 1) / kTileBlockRows);
    parallel_for(pool_, blocks, 1, [&](size_t begin, size_t end) {
      for (size_t b = begin; b < end; ++b) {
        const int64_t first = static_cast<int64_t>(b) * kTileBlockRows;
        const int64_t count = std::min(kTileBlockRows, rows - first);
        ShortProduct p = short_product_in_place(x + first * in, in, 1);
        p.in = w_t;
        p.in_stride = out;
        p.out = y + first * out;
        p.rows = count;
        p.depth = in;
        p.plane = out;
        // Without a bias the clamp is the tiles' own; a per-channel bias comes after them.
        if (!bias) p.lo = clamp.lo, p.hi = clamp.hi;
        short_product_columns(p, 0, out);
        if (bias) apply_bias_activation_rows(y + first * out, bias, g_.activation, count, out);
      }
    });
    return Status::ok();
  }

 private:
  // A multiple of the tiles' 6 rows; a block of y (96 x O floats) stays in L2 for its epilogue.
  static constexpr int64_t kTileBlockRows = 96;

  // w [O, C] -> w_t [C, O].
  void transpose_weight(const float* w, float* w_t) const {
    for (int64_t o = 0; o < g_.out_channels; ++o) {
      for (int64_t k = 0; k < g_.in_channels; ++k) w_t[k * g_.out_channels + o] = w[o * g_.in_channels + k];
    }
  }

  ConvGeometry g_;
  pthreadpool_t pool_;
  KernelScope* scope_;
  AlignedBuffer frozen_;  // the transposed constant weight; empty for a fed one
};

}  // namespace

std::unique_ptr<ConvKernel> make_short_nhwc_conv(const pock_op_desc& op, const ConvGeometry& g, KernelScope& scope,
                                                 Status* status) {
  *status = Status::ok();
  if (!pointwise_nhwc_takes(g) || g.in_channels > kShortProductMaxDepth) return nullptr;
  auto kernel = std::unique_ptr<ShortNhwcConv>(new (std::nothrow) ShortNhwcConv(g, op.num_threads, scope));
  if (!kernel) {
    *status = Status(Code::kOutOfMemory, "Conv2d NHWC short-reduction state");
    return nullptr;
  }
  *status = kernel->init(op.inputs[1]);
  if (!status->is_ok()) return nullptr;
  ++made_short;
  return kernel;
}

bool pointwise_nhwc_takes(const ConvGeometry& g) { return is_pointwise(g) && !g.bf16; }

bool pointwise_nhwc_can_run(const ConvGeometry& g) {
  return pointwise_nhwc_takes(g) && (g.in_channels <= kShortProductMaxDepth || pointwise_nhwc_available());
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
int short_kernels_made() { return made_short.load(); }
}  // namespace conv_pointwise_nhwc_testing

}  // namespace pock::cpu
