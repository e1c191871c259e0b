// Conv2d as GEMM on NCHW: per image and group, the input patches are unrolled into a
// [C/g * kh * kw, Ho * Wo] matrix (im2col) in the engine's shared scratch, and OpenBLAS computes
// Y[O/g, Ho*Wo] = W[O/g, C/g*kh*kw] * cols. The OIHW weight already is that row-major W, so it is
// read in place on every run — nothing to repack when it is trainable. A 1x1, stride-1, unpadded
// convolution skips im2col: the input planes are the matrix. On small planes (the late layers of
// MobileNetV2 and ResNet-18: 4x4 and 8x8) a GEMM per image has only 16-64 columns, which OpenBLAS
// runs far below its peak; there the whole batch's matrices (planes, or unfolded columns) sit side
// by side in scratch and one GEMM serves the batch (batched_, pointwise_batch.hpp). A reduction of
// at most 64 rows (a stem on 3 channels) goes through the direct tiles of short_product.hpp on the
// unfolded columns instead of sgemm (direct_).
#include "kernels/cpu/conv_kernel.hpp"

#ifdef POCK_HAVE_OPENBLAS
#include <algorithm>
#include <new>

#include "kernels/cpu/activation_epilogue.hpp"
#include "kernels/cpu/blas.hpp"
#include "kernels/cpu/parallel_sgemm.hpp"
#include "kernels/cpu/short_product.hpp"
#include "kernels/cpu/conv_unfold.hpp"
#include "kernels/cpu/cpu_util.hpp"
#include "kernels/cpu/pointwise_batch.hpp"
#include "kernels/cpu/thread_pool.hpp"

namespace pock::cpu {

bool im2col_conv_available() { return true; }

namespace {

class Im2colConv final : public ConvKernel {
 public:
  Im2colConv(const ConvGeometry& g, int32_t num_threads, KernelScope& scope)
      : g_(g), pool_(thread_pool_for(num_threads)), scope_(&scope) {
    rows_ = g.in_per_group() * g.kernel_h * g.kernel_w;
    pointwise_ = g.kernel_h == 1 && g.kernel_w == 1 && g.stride_h == 1 && g.stride_w == 1 && g.pad_top == 0 &&
                 g.pad_left == 0 && g.pad_bottom == 0 && g.pad_right == 0;
    batched_ = g.groups == 1 && (pointwise_ ? use_batched_pointwise(g.batch, g.out_plane())
                                            : use_batched_unfold(g.batch, g.out_plane()));
    // A short reduction over a plane of a tile or more (MobileNet's 3x3 stem on 3 channels: 27):
    // the direct tiles take the unfolded columns instead of sgemm (short_product.hpp).
    direct_ = g.groups == 1 && !pointwise_ && !batched_ && rows_ <= kShortProductMaxDepth && g.out_plane() >= 16;
  }

  Status init() {
    if (batched_) {
      const size_t floats = static_cast<size_t>((rows_ + g_.out_channels) * g_.batch * g_.out_plane());
      return scope_->reserve_scratch(floats * sizeof(float), "Conv2d batched scratch");
    }
    if (pointwise_) return Status::ok();
    const size_t packed = direct_ ? packed_short_rows_floats(g_.out_channels, rows_) : 0;
    return scope_->reserve_scratch((static_cast<size_t>(rows_ * cols_stride()) + packed) * sizeof(float),
                                   "Conv2d im2col scratch");
  }

  Status run(const KernelCall& c) override {
    const float* x = c.in_data<float>(0);
    const float* w = c.in_data<float>(1);
    const float* bias = g_.has_bias ? c.in_data<float>(2) : nullptr;
    float* y = c.out_data<float>(0);
    if (batched_) {
      run_batched(x, w, bias, y);
      return Status::ok();
    }
    if (direct_) {
      run_direct(x, w, bias, y);
      return Status::ok();
    }
    const int64_t og = g_.out_per_group(), cg = g_.in_per_group();
    const int64_t plane = g_.out_plane();
    for (int64_t n = 0; n < g_.batch; ++n) {
      for (int64_t group = 0; group < g_.groups; ++group) {
        const float* x_group = x + (n * g_.in_channels + group * cg) * g_.in_plane();
        float* y_group = y + (n * g_.out_channels + group * og) * plane;
        const float* matrix = x_group;
        if (!pointwise_) {
          im2col(g_, x_group, cols(), pool_);
          matrix = cols();
        }
        // Start from the bias and let sgemm accumulate onto it (beta = 1).
        for (int64_t o = 0; o < og; ++o) {
          std::fill(y_group + o * plane, y_group + (o + 1) * plane, bias ? bias[group * og + o] : 0.0f);
        }
        parallel_sgemm(pool_, {false, false, og, plane, rows_, 1.0f, w + group * og * rows_, rows_, matrix, plane,
                               1.0f, y_group, plane});
        apply_activation_inplace(g_.activation, y_group, og * plane);
      }
    }
    return Status::ok();
  }

 private:
  // Read at run time: the region may move while later ops are prepared.
  float* cols() const { return reinterpret_cast<float*>(scope_->scratch()); }

  // Y' [O, N*P] = W [O, K] * X' [K, N*P], X' the batch's matrices (planes when 1x1, K = C) and
  // Y' its output planes, side by side in scratch.
  void run_batched(const float* x, const float* w, const float* bias, float* y) const {
    const int64_t plane = g_.out_plane(), cols_n = g_.batch * plane;
    float* xs = cols();
    float* ys = xs + rows_ * cols_n;
    if (pointwise_) {
      gather_planes(x, xs, g_.batch, g_.in_channels, plane, pool_);
    } else {
      for (int64_t n = 0; n < g_.batch; ++n) im2col(g_, x + n * g_.in_channels * g_.in_plane(), xs + n * plane, pool_, cols_n);
    }
    for (int64_t o = 0; o < g_.out_channels; ++o) {
      std::fill(ys + o * cols_n, ys + (o + 1) * cols_n, bias ? bias[o] : 0.0f);
    }
    parallel_sgemm(pool_, {false, false, g_.out_channels, cols_n, rows_, 1.0f, w, rows_, xs, cols_n, 1.0f, ys, cols_n});
    apply_activation_inplace(g_.activation, ys, g_.out_channels * cols_n);
    scatter_planes(ys, y, g_.batch, g_.out_channels, plane, pool_);
  }

  // The unfolded rows' stride: for the direct tiles, apart enough not to share L1's sets.
  int64_t cols_stride() const { return direct_ ? short_product_input_stride(g_.out_plane()) : g_.out_plane(); }

  // Per image: unfold, then the direct tiles with the bias and activation fused.
  void run_direct(const float* x, const float* w, const float* bias, float* y) const {
    const int64_t plane = g_.out_plane();
    float* packed = cols() + rows_ * cols_stride();
    pack_short_rows(w, rows_, 1, g_.out_channels, rows_, packed);
    ShortProduct p = short_product_packed(packed, rows_);
    const Clamp clamp = clamp_of(g_.activation);
    p.lo = clamp.lo;
    p.hi = clamp.hi;
    p.bias = bias;
    p.in = cols();
    p.rows = g_.out_channels;
    p.depth = rows_;
    p.plane = plane;
    p.in_stride = cols_stride();
    for (int64_t n = 0; n < g_.batch; ++n) {
      im2col(g_, x + n * g_.in_channels * g_.in_plane(), cols(), pool_, p.in_stride);
      p.out = y + n * g_.out_channels * plane;
      run_short_product(p, pool_);
    }
  }

  ConvGeometry g_;
  pthreadpool_t pool_;
  int64_t rows_ = 0;  // C/g * kh * kw: the GEMM's K
  bool pointwise_ = false;
  bool batched_ = false;
  bool direct_ = false;  // short reduction: the direct tiles instead of sgemm
  KernelScope* scope_;
};

}  // namespace

std::unique_ptr<ConvKernel> make_im2col_conv(const pock_op_desc& op, const ConvGeometry& g, KernelScope& scope,
                                             Status* status) {
  *status = Status::ok();
  if (!fits_blas_int(g.out_per_group()) || !fits_blas_int(g.out_plane() * g.batch) ||
      !fits_blas_int(g.in_per_group() * g.kernel_h * g.kernel_w)) {
    return nullptr;
  }
  auto conv = std::unique_ptr<Im2colConv>(new (std::nothrow) Im2colConv(g, op.num_threads, scope));
  if (!conv) {
    *status = Status(Code::kOutOfMemory, "Conv2d im2col state");
    return nullptr;
  }
  *status = conv->init();
  if (!status->is_ok()) return nullptr;
  configure_blas_threads(op.num_threads);
  return conv;
}

}  // namespace pock::cpu

#else  // built without OpenBLAS

namespace pock::cpu {

bool im2col_conv_available() { return false; }

std::unique_ptr<ConvKernel> make_im2col_conv(const pock_op_desc&, const ConvGeometry&, KernelScope&, Status* status) {
  *status = Status::ok();
  return nullptr;
}

}  // namespace pock::cpu

#endif
