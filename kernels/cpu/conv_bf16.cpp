#include "kernels/cpu/conv_bf16.hpp"

#ifdef POCK_HAVE_OPENBLAS
#include <algorithm>
#include <new>
#include <string>
#include <vector>

#include "kernels/cpu/activation_epilogue.hpp"
#include "kernels/cpu/bf16_gemm.hpp"
#include "kernels/cpu/blas.hpp"
#include "kernels/cpu/conv_grad_kernel.hpp"
#include "kernels/cpu/conv_unfold.hpp"
#include "kernels/cpu/cpu_util.hpp"
#include "kernels/cpu/parallel_sgemm.hpp"
#include "kernels/cpu/thread_pool.hpp"

namespace pock::cpu {

bool bf16_conv_accepts(const ConvGeometry& g) {
  return g.batch > 0 && g.out_plane() > 0 && g.in_plane() > 0 && fits_blas_int(g.out_per_group()) &&
         fits_blas_int(g.out_plane()) && fits_blas_int(g.in_per_group() * g.kernel_h * g.kernel_w);
}

namespace {

// The operands' storage: T = uint16_t holds bf16 values for oneDNN's matmul (Bf16Isa::kAvx512Bf16),
// T = float holds the same values as f32 for OpenBLAS's sgemm (the fallback).
void to_operand(const float* in, int64_t n, uint16_t* out) { convert_to_bf16(in, n, out); }
void to_operand(const float* in, int64_t n, float* out) { round_to_bf16(in, n, out); }

// One product shape y[M, N] = op(a) op(b) over operands stored as T; y is overwritten.
template <typename T>
class OperandGemm;

template <>
class OperandGemm<uint16_t> {
 public:
  Status prepare(const Bf16GemmShape& s, pthreadpool_t, int32_t num_threads) {
    POCK_ASSIGN_OR_RETURN(dnnl_, DnnlBf16Gemm::create(s, num_threads));
    return Status::ok();
  }
  Status run(const uint16_t* a, const uint16_t* b, float* y) const {
    return dnnl_->run(a, b, nullptr, y, one_product_, one_product_);
  }

 private:
  const std::vector<int64_t> one_product_{0};  // at the pointers given; made here, not in every run
  std::unique_ptr<DnnlBf16Gemm> dnnl_;
};

template <>
class OperandGemm<float> {
 public:
  Status prepare(const Bf16GemmShape& s, pthreadpool_t pool, int32_t num_threads) {
    s_ = s;
    pool_ = pool;
    configure_blas_threads(num_threads);
    return Status::ok();
  }
  Status run(const float* a, const float* b, float* y) const {
    const Bf16GemmShape& s = s_;
    parallel_sgemm(pool_, {s.transpose_a, s.transpose_b, s.m, s.n, s.k, 1.0f, a, s.lda, b, s.ldb, 0.0f, y, s.n});
    return Status::ok();
  }

 private:
  Bf16GemmShape s_;
  pthreadpool_t pool_ = nullptr;
};

// The scratch sections of one op, each 64-byte aligned, as byte offsets into the engine's region.
class ScratchSections {
 public:
  template <typename U>
  size_t add(int64_t count) {
    const size_t offset = total_;
    total_ += (static_cast<size_t>(count) * sizeof(U) + 63) / 64 * 64;
    return offset;
  }
  size_t total() const { return total_; }

 private:
  size_t total_ = 0;
};

// What the three ops share: the geometry, the pool for (un)folding, the scratch region.
template <typename T>
class Bf16ConvBase : public ConvKernel {
 public:
  Bf16ConvBase(const ConvGeometry& g, int32_t num_threads, KernelScope& scope)
      : g_(g), num_threads_(num_threads), pool_(thread_pool_for(num_threads)), scope_(&scope),
        identity_(unfold_is_identity(g)) {}

 protected:

  int64_t k() const { return g_.in_per_group() * g_.kernel_h * g_.kernel_w; }
  int64_t plane() const { return g_.out_plane(); }
  int64_t og() const { return g_.out_per_group(); }
  int64_t x_offset(int64_t n, int64_t group) const {
    return (n * g_.in_channels + group * g_.in_per_group()) * g_.in_plane();
  }
  int64_t dy_offset(int64_t n, int64_t group) const { return (n * g_.out_channels + group * og()) * plane(); }
  int64_t w_offset(int64_t group) const { return group * og() * k(); }

  // Read at run time: the region may move while later ops are prepared.
  template <typename U>
  U* at(size_t offset) const {
    return reinterpret_cast<U*>(scope_->scratch() + offset);
  }
  // The group's unfolded input as f32: its planes when the unfolding is the identity, else im2col
  // into the f32 section at `staging`.
  const float* unfolded(const float* x_group, size_t staging) const {
    if (identity_) return x_group;
    im2col(g_, x_group, at<float>(staging), pool_);
    return at<float>(staging);
  }
  // The weight's operand [O, K] (forward and input gradient: converted once per run).
  size_t weight_section(ScratchSections& s) const { return s.add<T>(g_.out_channels * k()); }
  // Reserves the sections and prepares gemm_ for `shape`.
  Status reserve_and_prepare(const ScratchSections& s, const char* what, const Bf16GemmShape& shape) {
    POCK_RETURN_IF_ERROR(scope_->reserve_scratch(s.total(), what));
    return gemm_.prepare(shape, pool_, num_threads_);
  }

  ConvGeometry g_;
  int32_t num_threads_;
  pthreadpool_t pool_;
  KernelScope* scope_;
  bool identity_;
  OperandGemm<T> gemm_;  // the op's product (the weight gradient's for whole groups)
};

template <typename T>
class Bf16Conv final : public Bf16ConvBase<T> {
  using Bf16ConvBase<T>::Bf16ConvBase;

 public:
  Status init() {
    const int64_t k = this->k(), p = this->plane();
    ScratchSections s;
    w_ = this->weight_section(s);
    cols_ = s.add<T>(k * p);
    if (!this->identity_) staging_ = s.add<float>(k * p);
    return this->reserve_and_prepare(s, "Conv2d bf16 operands", {this->og(), p, k, false, false, k, p, false});
  }

  Status run(const KernelCall& c) override {
    const ConvGeometry& g = this->g_;
    const float* x = c.in_data<float>(0);
    const float* bias = g.has_bias ? c.in_data<float>(2) : nullptr;
    float* y = c.out_data<float>(0);
    T* w = this->template at<T>(w_);
    T* cols = this->template at<T>(cols_);
    to_operand(c.in_data<float>(1), g.out_channels * this->k(), w);
    const int64_t og = this->og(), plane = this->plane();
    for (int64_t n = 0; n < g.batch; ++n) {
      for (int64_t group = 0; group < g.groups; ++group) {
        to_operand(this->unfolded(x + this->x_offset(n, group), staging_), this->k() * plane, cols);
        float* y_group = y + this->dy_offset(n, group);
        POCK_RETURN_IF_ERROR(this->gemm_.run(w + this->w_offset(group), cols, y_group));
        if (bias) {
          for (int64_t o = 0; o < og; ++o) {
            const float b = bias[group * og + o];
            for (float* v = y_group + o * plane; v != y_group + (o + 1) * plane; ++v) *v += b;
          }
        }
        apply_activation_inplace(g.activation, y_group, og * plane);
      }
    }
    return Status::ok();
  }

 private:
  size_t w_ = 0, cols_ = 0, staging_ = 0;
};

template <typename T>
class Bf16ConvGradInput final : public Bf16ConvBase<T> {
  using Bf16ConvBase<T>::Bf16ConvBase;

 public:
  Status init() {
    const int64_t k = this->k(), p = this->plane();
    ScratchSections s;
    w_ = this->weight_section(s);
    dy_ = s.add<T>(this->og() * p);
    if (!this->identity_) dcols_ = s.add<float>(k * p);
    return this->reserve_and_prepare(s, "Conv2dGradInput bf16 operands", {k, p, this->og(), true, false, k, p, false});
  }

  Status run(const KernelCall& c) override {
    const ConvGeometry& g = this->g_;
    const float* dy = c.in_data<float>(0);
    float* dx = c.out_data<float>(0);
    T* w = this->template at<T>(w_);
    T* dy_group = this->template at<T>(dy_);
    to_operand(c.in_data<float>(1), g.out_channels * this->k(), w);
    for (int64_t n = 0; n < g.batch; ++n) {
      for (int64_t group = 0; group < g.groups; ++group) {
        to_operand(dy + this->dy_offset(n, group), this->og() * this->plane(), dy_group);
        float* dx_group = dx + this->x_offset(n, group);
        float* dcols = this->identity_ ? dx_group : this->template at<float>(dcols_);
        POCK_RETURN_IF_ERROR(this->gemm_.run(w + this->w_offset(group), dy_group, dcols));
        if (!this->identity_) col2im(g, dcols, dx_group, this->pool_);
      }
    }
    return Status::ok();
  }

 private:
  size_t w_ = 0, dy_ = 0, dcols_ = 0;
};

template <typename T>
class Bf16ConvGradWeight final : public Bf16ConvBase<T> {
  using B = Bf16ConvBase<T>;

 public:
  Bf16ConvGradWeight(const ConvGeometry& g, int32_t num_threads, KernelScope& scope, int64_t channels)
      : B(g, num_threads, scope), channels_(channels) {}

  Status init() {
    const int64_t k = this->k(), p = this->plane(), og = this->og();
    ScratchSections s;
    dy_ = s.add<T>(og * p);
    cols_ = s.add<T>(k * p);
    if (!this->identity_) staging_ = s.add<float>(k * p);
    sum_ = s.add<float>(og * k);
    // Partial-channel updates: every group computes og rows but the last one below `channels_`.
    POCK_RETURN_IF_ERROR(
        this->reserve_and_prepare(s, "Conv2dGradWeight bf16 operands", {og, k, p, false, true, p, p, false}));
    const int64_t last = rows(last_group());
    if (last == og) return Status::ok();
    return partial_.prepare({last, k, p, false, true, p, p, false}, this->pool_, this->num_threads_);
  }

  Status run(const KernelCall& c) override {
    const ConvGeometry& g = this->g_;
    const float* x = c.in_data<float>(0);
    const float* dy = c.in_data<float>(1);
    float* dw = c.out_data<float>(0);
    const int64_t k = this->k(), plane = this->plane();
    T* dy_rows = this->template at<T>(dy_);
    T* cols = this->template at<T>(cols_);
    for (int64_t group = 0; group <= last_group(); ++group) {
      const int64_t r = rows(group);
      const OperandGemm<T>& gemm = r == this->og() ? this->gemm_ : partial_;
      float* dw_group = dw + this->w_offset(group);
      for (int64_t n = 0; n < g.batch; ++n) {
        to_operand(this->unfolded(x + this->x_offset(n, group), staging_), k * plane, cols);
        to_operand(dy + this->dy_offset(n, group), r * plane, dy_rows);
        // The first image writes dw; the others go through a sum section (the GEMM overwrites).
        float* out = n == 0 ? dw_group : this->template at<float>(sum_);
        POCK_RETURN_IF_ERROR(gemm.run(dy_rows, cols, out));
        if (n > 0) {
          for (int64_t i = 0; i < r * k; ++i) dw_group[i] += out[i];
        }
      }
    }
    return Status::ok();
  }

 private:
  int64_t last_group() const { return (channels_ - 1) / this->og(); }
  int64_t rows(int64_t group) const { return std::min(this->og(), channels_ - group * this->og()); }

  int64_t channels_;
  size_t dy_ = 0, cols_ = 0, staging_ = 0, sum_ = 0;
  OperandGemm<T> partial_;  // the last group's, when it ends below og rows
};

template <typename Kernel, typename... Args>
std::unique_ptr<ConvKernel> make(const pock_op_desc& op, const ConvGeometry& g, KernelScope& scope, Status* status,
                                 Args... args) {
  *status = Status::ok();
  if (!bf16_conv_accepts(g)) return nullptr;
  auto kernel = std::unique_ptr<Kernel>(new (std::nothrow) Kernel(g, op.num_threads, scope, args...));
  if (!kernel) {
    *status = Status(Code::kOutOfMemory, std::string(op.op) + " '" + op.name + "': bf16 state");
    return nullptr;
  }
  *status = kernel->init();
  if (!status->is_ok()) return nullptr;
  return kernel;
}

// The storage type of the machine's way (bf16_gemm.hpp), chosen when the op is prepared.
template <template <typename> class Kernel, typename... Args>
std::unique_ptr<ConvKernel> make_for_isa(const pock_op_desc& op, const ConvGeometry& g, KernelScope& scope,
                                         Status* status, Args... args) {
  if (bf16_isa() == Bf16Isa::kAvx512Bf16) return make<Kernel<uint16_t>>(op, g, scope, status, args...);
  return make<Kernel<float>>(op, g, scope, status, args...);
}

}  // namespace

std::unique_ptr<ConvKernel> make_bf16_conv(const pock_op_desc& op, const ConvGeometry& g, KernelScope& scope,
                                           Status* status) {
  return make_for_isa<Bf16Conv>(op, g, scope, status);
}

std::unique_ptr<ConvKernel> make_bf16_conv_grad_input(const pock_op_desc& op, const ConvGeometry& g,
                                                      KernelScope& scope, Status* status) {
  return make_for_isa<Bf16ConvGradInput>(op, g, scope, status);
}

std::unique_ptr<ConvKernel> make_bf16_conv_grad_weight(const pock_op_desc& op, const ConvGeometry& g,
                                                       int64_t channels, KernelScope& scope, Status* status) {
  return make_for_isa<Bf16ConvGradWeight>(op, g, scope, status, channels);
}

}  // namespace pock::cpu

#else  // built without OpenBLAS: compute "bf16" convolutions run on ref

namespace pock::cpu {

bool bf16_conv_accepts(const ConvGeometry&) { return false; }

std::unique_ptr<ConvKernel> make_bf16_conv(const pock_op_desc&, const ConvGeometry&, KernelScope&, Status* status) {
  *status = Status::ok();
  return nullptr;
}

std::unique_ptr<ConvKernel> make_bf16_conv_grad_input(const pock_op_desc&, const ConvGeometry&, KernelScope&,
                                                      Status* status) {
  *status = Status::ok();
  return nullptr;
}

std::unique_ptr<ConvKernel> make_bf16_conv_grad_weight(const pock_op_desc&, const ConvGeometry&, int64_t,
                                                       KernelScope&, Status* status) {
  *status = Status::ok();
  return nullptr;
}

}  // namespace pock::cpu

#endif
