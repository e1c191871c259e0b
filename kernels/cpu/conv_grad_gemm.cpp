// Conv2d's input and weight gradients as GEMM (the forward convolution is im2col + GEMM, see
// conv_im2col.cpp), per image and group, with K = C/g * kh * kw and P = OH * OW:
//   input:  dcols[K, P] = w_gᵀ[K, O/g] dy_g[O/g, P], then col2im scatters dcols onto dx
//   weight: dw_g[k, K] += dy_g[k, P] cols[K, P]ᵀ over the images, k = the group's computed channels
// The input gradient is the paper's transposed convolution written as a GEMM whose result is
// folded back (col2im), so it needs no flipped copy of the weight and works for a trainable w.
// A 1x1, stride-1, unpadded convolution skips the unfolding: the planes are the matrix. On small
// planes the batch's matrices (planes, or unfolded columns) sit side by side so that one GEMM
// serves the whole batch (pointwise_batch.hpp).
#include "kernels/cpu/conv_grad_kernel.hpp"

#ifdef POCK_HAVE_OPENBLAS
#include <algorithm>
#include <new>

#include "kernels/cpu/blas.hpp"
#include "kernels/cpu/parallel_sgemm.hpp"
#include "kernels/cpu/conv_unfold.hpp"
#include "kernels/cpu/cpu_util.hpp"
#include "kernels/cpu/pointwise_batch.hpp"
#include "kernels/cpu/thread_pool.hpp"

namespace pock::cpu {

bool gemm_conv_grad_available() { return true; }

namespace {

int blas_int(int64_t v) { return static_cast<int>(std::max<int64_t>(v, 1)); }

// What both gradients share: the geometry, the pool for (un)folding, the column scratch (the
// engine's shared scratch region, runtime/kernel_scope.hpp).
class GemmConvGrad : public ConvKernel {
 public:
  GemmConvGrad(const ConvGeometry& g, int32_t num_threads, KernelScope& scope)
      : g_(g),
        pool_(thread_pool_for(num_threads)),
        identity_(unfold_is_identity(g)),
        batched_(g.groups == 1 && (identity_ ? use_batched_pointwise(g.batch, g.out_plane())
                                             : use_batched_unfold(g.batch, g.out_plane()))),
        scope_(&scope) {}

  Status init() {
    if (batched_) {
      const size_t floats = static_cast<size_t>((k() + g_.out_channels) * g_.batch * g_.out_plane());
      return scope_->reserve_scratch(floats * sizeof(float), "Conv2d gradient batched planes");
    }
    if (identity_) return Status::ok();
    return scope_->reserve_scratch(static_cast<size_t>(k() * g_.out_plane()) * sizeof(float),
                                   "Conv2d gradient columns");
  }

 protected:
  int64_t k() const { return g_.in_per_group() * g_.kernel_h * g_.kernel_w; }
  // Read at run time: the region may move while later ops are prepared.
  float* cols() const { return reinterpret_cast<float*>(scope_->scratch()); }
  // Offsets of image n, group `group` in x (or dx), dy (or y) and w (or dw).
  int64_t x_offset(int64_t n, int64_t group) const {
    return (n * g_.in_channels + group * g_.in_per_group()) * g_.in_plane();
  }
  int64_t dy_offset(int64_t n, int64_t group) const {
    return (n * g_.out_channels + group * g_.out_per_group()) * g_.out_plane();
  }
  int64_t w_offset(int64_t group) const { return group * g_.out_per_group() * k(); }

  // The batched form's scratch: x's (or dx's) matrix [K, N*P] (its planes when the unfolding is
  // the identity, K = C), then dy's planes [O, N*P].
  float* x_planes() const { return cols(); }
  float* dy_planes() const { return cols() + k() * g_.batch * g_.out_plane(); }
  int cols_n() const { return blas_int(g_.batch * g_.out_plane()); }

  ConvGeometry g_;
  pthreadpool_t pool_;
  bool identity_;
  bool batched_;  // small planes: one GEMM over the batch (pointwise_batch.hpp)
  KernelScope* scope_;
};

class GemmConvGradInput final : public GemmConvGrad {
 public:
  using GemmConvGrad::GemmConvGrad;

  Status run(const KernelCall& c) override {
    const float* dy = c.in_data<float>(0);
    const float* w = c.in_data<float>(1);
    float* dx = c.out_data<float>(0);
    const int64_t plane = g_.out_plane(), og = g_.out_per_group();
    if (batched_) {  // dcols [K, N*P] = wᵀ [K, O] dy' [O, N*P], then back onto each image
      gather_planes(dy, dy_planes(), g_.batch, g_.out_channels, plane, pool_);
      parallel_sgemm(pool_, {true, false, k(), cols_n(), g_.out_channels, 1.0f, w, k(), dy_planes(), cols_n(), 0.0f,
                             x_planes(), cols_n()});
      if (identity_) {
        scatter_planes(x_planes(), dx, g_.batch, g_.in_channels, plane, pool_);
      } else {
        for (int64_t n = 0; n < g_.batch; ++n) col2im(g_, x_planes() + n * plane, dx + x_offset(n, 0), pool_, cols_n());
      }
      return Status::ok();
    }
    for (int64_t n = 0; n < g_.batch; ++n) {
      for (int64_t group = 0; group < g_.groups; ++group) {
        float* dcols = identity_ ? dx + x_offset(n, group) : cols();
        parallel_sgemm(pool_, {true, false, k(), plane, og, 1.0f, w + w_offset(group), k(), dy + dy_offset(n, group),
                               plane, 0.0f, dcols, plane});
        if (!identity_) col2im(g_, dcols, dx + x_offset(n, group), pool_);
      }
    }
    return Status::ok();
  }
};

class GemmConvGradWeight final : public GemmConvGrad {
 public:
  GemmConvGradWeight(const ConvGeometry& g, int32_t num_threads, KernelScope& scope, int64_t channels)
      : GemmConvGrad(g, num_threads, scope), channels_(channels) {}

  Status run(const KernelCall& c) override {
    const float* x = c.in_data<float>(0);
    const float* dy = c.in_data<float>(1);
    float* dw = c.out_data<float>(0);
    const int64_t plane = g_.out_plane(), og = g_.out_per_group();
    if (g_.batch == 0) std::fill(dw, dw + channels_ * k(), 0.0f);
    if (batched_ && g_.batch > 0) {  // dw [rows, K] = dy' [rows, N*P] cols' ᵀ [N*P, K]
      if (identity_) {
        gather_planes(x, x_planes(), g_.batch, g_.in_channels, plane, pool_);
      } else {
        for (int64_t n = 0; n < g_.batch; ++n) im2col(g_, x + x_offset(n, 0), x_planes() + n * plane, pool_, cols_n());
      }
      gather_planes(dy, dy_planes(), g_.batch, g_.out_channels, plane, pool_);
      parallel_sgemm(pool_, {false, true, std::min(og, channels_), k(), cols_n(), 1.0f, dy_planes(), cols_n(),
                             x_planes(), cols_n(), 0.0f, dw, k()});
      return Status::ok();
    }
    for (int64_t group = 0; group < g_.groups; ++group) {
      // Partial-channel updates: only the group's channels below `channels_` are computed.
      const int64_t rows = std::min(og, channels_ - group * og);
      if (rows <= 0) break;
      for (int64_t n = 0; n < g_.batch; ++n) {
        const float* matrix = x + x_offset(n, group);
        if (!identity_) {
          im2col(g_, matrix, cols(), pool_);
          matrix = cols();
        }
        parallel_sgemm(pool_, {false, true, rows, k(), plane, 1.0f, dy + dy_offset(n, group), plane, matrix, plane,
                               n == 0 ? 0.0f : 1.0f, dw + w_offset(group), k()});
      }
    }
    return Status::ok();
  }

 private:
  int64_t channels_;
};

bool fits(const ConvGeometry& g) {
  return fits_blas_int(g.out_per_group()) && fits_blas_int(g.out_plane() * std::max<int64_t>(g.batch, 1)) &&
         fits_blas_int(g.in_per_group() * g.kernel_h * g.kernel_w);
}

template <typename Kernel, typename... Args>
std::unique_ptr<ConvKernel> make(const pock_op_desc& op, const ConvGeometry& g, KernelScope& scope, Status* status,
                                 Args... args) {
  *status = Status::ok();
  if (!fits(g)) return nullptr;
  auto kernel = std::unique_ptr<Kernel>(new (std::nothrow) Kernel(g, op.num_threads, scope, args...));
  if (!kernel) {
    *status = Status(Code::kOutOfMemory, std::string(op.op) + " gemm state");
    return nullptr;
  }
  *status = kernel->init();
  if (!status->is_ok()) return nullptr;
  configure_blas_threads(op.num_threads);
  return kernel;
}

}  // namespace

std::unique_ptr<ConvKernel> make_gemm_conv_grad_input(const pock_op_desc& op, const ConvGeometry& g, KernelScope& scope,
                                                      Status* status) {
  return make<GemmConvGradInput>(op, g, scope, status);
}

std::unique_ptr<ConvKernel> make_gemm_conv_grad_weight(const pock_op_desc& op, const ConvGeometry& g, int64_t channels,
                                                       KernelScope& scope, Status* status) {
  return make<GemmConvGradWeight>(op, g, scope, status, channels);
}

}  // namespace pock::cpu

#else  // built without OpenBLAS: only the depthwise way is left

namespace pock::cpu {

bool gemm_conv_grad_available() { return false; }

std::unique_ptr<ConvKernel> make_gemm_conv_grad_input(const pock_op_desc&, const ConvGeometry&, KernelScope&,
                                                      Status* status) {
  *status = Status::ok();
  return nullptr;
}

std::unique_ptr<ConvKernel> make_gemm_conv_grad_weight(const pock_op_desc&, const ConvGeometry&, int64_t, KernelScope&,
                                                       Status* status) {
  *status = Status::ok();
  return nullptr;
}

}  // namespace pock::cpu

#endif
