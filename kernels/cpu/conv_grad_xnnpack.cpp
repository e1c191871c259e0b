// Conv2dGradInput with a frozen weight through an XNNPACK deconvolution (NHWC f32).
//
// dx[c][iy][ix] = sum over o, ky, kx with iy = oy * stride - pad_top + ky * dilation (and the same
// across) of dy[o][oy][ox] * w[o][c][ky][kx]: a deconvolution whose input channels are the
// convolution's output channels and whose output channels are its input channels, with the
// convolution's pads as output padding. Its output is stride * (out - 1) + dilation * (k - 1) + 1
// - pads rows; the forward convolution drops (in + pads - dilation * (k - 1) - 1) % stride rows
// at the end of its input, and the deconvolution's adjustment adds them back (as zeros), so dx
// has the forward input's extent exactly.
//
// At prepare: the OIHW weight [O, C/g, kh, kw] is transposed into XNNPACK's deconvolution kernel
// layout [g][C/g][kh][kw][O/g] and packed by the operator, once per engine for each (weight,
// geometry), shared through the KernelScope as conv_xnnpack.cpp does. A run is: dy NCHW -> NHWC
// into scratch, xnn_run_operator, dx NHWC -> NCHW out of scratch. Scratch is the scope's one
// region, so a run allocates nothing; the operator is set up again when a later prepare moved it.
#include "kernels/cpu/conv_grad_xnnpack.hpp"

#include <atomic>

namespace pock::cpu {
namespace conv_grad_xnnpack_testing {
namespace {
std::atomic<Choice> g_choice{Choice::kByRule};
std::atomic<int> g_made{0};
}  // namespace
void set_choice(Choice choice) { g_choice.store(choice); }
Choice choice() { return g_choice.load(); }
int kernels_made() { return g_made.load(); }
}  // namespace conv_grad_xnnpack_testing
}  // namespace pock::cpu

#ifdef POCK_HAVE_XNNPACK
#include <xnnpack.h>

#include <cmath>
#include <new>
#include <string>

#include "kernels/cpu/cpu_util.hpp"
#include "kernels/cpu/layout.hpp"
#include "kernels/cpu/thread_pool.hpp"
#include "runtime/mapped_file.hpp"

namespace pock::cpu {
namespace {

bool fits_u32(int64_t v) { return v >= 0 && v <= int64_t{0xFFFFFFFF}; }
size_t round_up_64(size_t v) { return (v + 63) / 64 * 64; }

// Rows (or columns) of the forward input that no window reached: the deconvolution's adjustment.
int64_t adjustment(int64_t in, int64_t pads, int64_t kernel, int64_t stride, int64_t dilation) {
  return (in + pads - dilation * (kernel - 1) - 1) % stride;
}

// OIHW [O][C/g][kh][kw] -> [g][C/g][kh][kw][O/g]: per group, the deconvolution's output channel
// (the convolution's input channel) outermost, its input channel (the convolution's output
// channel) innermost. No flip: XNNPACK's deconvolution is the convolution's transpose as is.
void repack_deconv_kernel(const float* oihw, const ConvGeometry& g, float* out) {
  const int64_t taps = g.kernel_h * g.kernel_w, cg = g.in_per_group(), og = g.out_per_group();
  for (int64_t group = 0; group < g.groups; ++group) {
    for (int64_t ol = 0; ol < og; ++ol) {
      const float* src = oihw + (group * og + ol) * cg * taps;
      for (int64_t cl = 0; cl < cg; ++cl) {
        for (int64_t t = 0; t < taps; ++t) out[((group * cg + cl) * taps + t) * og + ol] = src[cl * taps + t];
      }
    }
  }
}

// One deconvolution operator (it owns the packed weight), shared by the op instances of one engine
// with the same constant weight and geometry.
struct SharedDeconv {
  SharedDeconv() = default;
  SharedDeconv(const SharedDeconv&) = delete;
  SharedDeconv& operator=(const SharedDeconv&) = delete;
  ~SharedDeconv() {
    if (op) xnn_delete_operator(op);
  }
  xnn_operator_t op = nullptr;
  const float* bound_in = nullptr;  // where it was last set up to read and write
  float* bound_out = nullptr;
};

std::string operator_key(const void* weight, const ConvGeometry& g, pthreadpool_t pool) {
  std::string key = "xnnpack.deconv2d";
  for (int64_t v : {reinterpret_cast<int64_t>(weight), reinterpret_cast<int64_t>(pool), g.batch, g.in_channels, g.in_h,
                    g.in_w, g.out_channels, g.out_h, g.out_w, g.kernel_h, g.kernel_w, g.stride_h, g.stride_w,
                    g.dilation_h, g.dilation_w, g.pad_top, g.pad_left, g.pad_bottom, g.pad_right, g.groups}) {
    key += ' ';
    key += std::to_string(v);
  }
  return key;
}

class XnnpackConvGradInput final : public ConvKernel {
 public:
  XnnpackConvGradInput(const ConvGeometry& g, KernelScope& scope) : g_(g), scope_(&scope) {}

  // False (with *status OK) when XNNPACK rejects the parameters.
  bool init(const pock_op_desc& op, Status* status) {
    pool_ = thread_pool_for(op.num_threads);
    // Scratch: NHWC dy, then NHWC dx. XNNPACK may read (never use) up to XNN_EXTRA_BYTES past
    // the end of its input, hence the tail.
    const size_t dy_bytes = static_cast<size_t>(g_.batch * g_.out_channels * g_.out_plane()) * sizeof(float);
    const size_t dx_bytes = static_cast<size_t>(g_.batch * g_.in_channels * g_.in_plane()) * sizeof(float);
    dx_offset_ = round_up_64(dy_bytes + XNN_EXTRA_BYTES);
    *status = scope_->reserve_scratch(dx_offset_ + dx_bytes + XNN_EXTRA_BYTES, "Conv2dGradInput NHWC scratch");
    if (!status->is_ok()) return false;
    const std::string key = operator_key(op.inputs[1].data, g_, pool_);
    shared_ = std::static_pointer_cast<SharedDeconv>(scope_->find_shared(key));
    if (!shared_) {
      if (!create_operator(op, status)) return false;
      if (!scope_->put_shared(key, shared_)) {
        *status = Status(Code::kOutOfMemory, "Conv2dGradInput XNNPACK operator cache");
        return false;
      }
    }
    // Set up now so that the first run finds XNNPACK's per-size state made.
    *status = bind(op.name);
    return status->is_ok();
  }

  Status run(const KernelCall& c) override {
    if (shared_->bound_in != dy_nhwc() || shared_->bound_out != dx_nhwc()) POCK_RETURN_IF_ERROR(bind(c.desc->name));
    nchw_to_nhwc(c.in_data<float>(0), dy_nhwc(), g_.batch, g_.out_channels, g_.out_plane(), pool_);
    const xnn_status s = xnn_run_operator(shared_->op, pool_);
    if (s != xnn_status_success) {
      return c.error("xnn_run_operator (deconvolution) failed (" + std::to_string(static_cast<int>(s)) + ")");
    }
    nhwc_to_nchw(dx_nhwc(), nullptr, c.out_data<float>(0), g_.batch, g_.in_channels, g_.in_plane(), pool_);
    return Status::ok();
  }

 private:
  bool create_operator(const pock_op_desc& op, Status* status) {
    shared_ = std::shared_ptr<SharedDeconv>(new (std::nothrow) SharedDeconv());
    if (!shared_) {
      *status = Status(Code::kOutOfMemory, "Conv2dGradInput XNNPACK operator");
      return false;
    }
    AlignedBuffer kernel;  // only until the operator has packed it
    *status = kernel.allocate(op.inputs[1].nbytes, "Conv2dGradInput kernel repack");
    if (!status->is_ok()) return false;
    float* kernel_data = reinterpret_cast<float*>(kernel.data());
    repack_deconv_kernel(static_cast<const float*>(op.inputs[1].data), g_, kernel_data);
    const xnn_status created = xnn_create_deconvolution2d_nhwc_f32(
        static_cast<uint32_t>(g_.pad_top), static_cast<uint32_t>(g_.pad_right), static_cast<uint32_t>(g_.pad_bottom),
        static_cast<uint32_t>(g_.pad_left), static_cast<uint32_t>(g_.kernel_h), static_cast<uint32_t>(g_.kernel_w),
        static_cast<uint32_t>(g_.stride_h), static_cast<uint32_t>(g_.stride_w), static_cast<uint32_t>(g_.dilation_h),
        static_cast<uint32_t>(g_.dilation_w), static_cast<uint32_t>(g_.groups),
        static_cast<size_t>(g_.out_per_group()), static_cast<size_t>(g_.in_per_group()),
        static_cast<size_t>(g_.out_channels), static_cast<size_t>(g_.in_channels), kernel_data, nullptr, -INFINITY,
        INFINITY,
        // Yield workers after each run, as parallel_for does (thread_pool.hpp).
        XNN_FLAG_YIELD_WORKERS, &shared_->op);
    if (created != xnn_status_success) {
      shared_->op = nullptr;
      shared_.reset();
      return false;  // a shape this XNNPACK build does not take: the gemm way runs it
    }
    return true;
  }

  Status bind(const char* op_name) {
    const int64_t adjust_h = adjustment(g_.in_h, g_.pad_top + g_.pad_bottom, g_.kernel_h, g_.stride_h, g_.dilation_h);
    const int64_t adjust_w = adjustment(g_.in_w, g_.pad_left + g_.pad_right, g_.kernel_w, g_.stride_w, g_.dilation_w);
    const xnn_status set_up = xnn_setup_deconvolution2d_nhwc_f32(
        shared_->op, static_cast<size_t>(g_.batch), static_cast<size_t>(g_.out_h), static_cast<size_t>(g_.out_w),
        static_cast<uint32_t>(adjust_h), static_cast<uint32_t>(adjust_w), dy_nhwc(), dx_nhwc(), pool_);
    if (set_up != xnn_status_success) {
      shared_->bound_in = shared_->bound_out = nullptr;
      return Status(Code::kInternal, std::string("Conv2dGradInput '") + op_name +
                                         "': xnn_setup_deconvolution2d_nhwc_f32 failed (" +
                                         std::to_string(static_cast<int>(set_up)) + ")");
    }
    shared_->bound_in = dy_nhwc();
    shared_->bound_out = dx_nhwc();
    return Status::ok();
  }

  // Read at run time: the region may move while later ops are prepared.
  float* dy_nhwc() const { return reinterpret_cast<float*>(scope_->scratch()); }
  float* dx_nhwc() const { return reinterpret_cast<float*>(scope_->scratch() + dx_offset_); }

  ConvGeometry g_;
  KernelScope* scope_;
  pthreadpool_t pool_ = nullptr;
  size_t dx_offset_ = 0;  // of NHWC dx in the scratch region
  std::shared_ptr<SharedDeconv> shared_;
};

}  // namespace

std::unique_ptr<ConvKernel> make_xnnpack_conv_grad_input(const pock_op_desc& op, const ConvGeometry& g,
                                                         KernelScope& scope, Status* status) {
  *status = Status::ok();
  if (!xnnpack_conv_available() || !is_constant(op.inputs[1])) return nullptr;
  for (int64_t v : {g.pad_top, g.pad_left, g.pad_bottom, g.pad_right, g.kernel_h, g.kernel_w, g.stride_h, g.stride_w,
                    g.dilation_h, g.dilation_w, g.groups}) {
    if (!fits_u32(v)) return nullptr;
  }
  if (g.batch == 0 || g.in_plane() == 0 || g.out_plane() == 0 || g.out_channels == 0 || g.in_channels == 0)
    return nullptr;
  auto kernel = std::unique_ptr<XnnpackConvGradInput>(new (std::nothrow) XnnpackConvGradInput(g, scope));
  if (!kernel) {
    *status = Status(Code::kOutOfMemory, "Conv2dGradInput XNNPACK state");
    return nullptr;
  }
  if (!kernel->init(op, status)) return nullptr;
  ++conv_grad_xnnpack_testing::g_made;
  return kernel;
}

}  // namespace pock::cpu

#else  // built without XNNPACK

namespace pock::cpu {

std::unique_ptr<ConvKernel> make_xnnpack_conv_grad_input(const pock_op_desc&, const ConvGeometry&, KernelScope&,
                                                         Status* status) {
  *status = Status::ok();
  return nullptr;
}

}  // namespace pock::cpu

#endif

namespace pock::cpu {

// Measured (2026-12-03, the 2-core AVX-512 Xeon development machine, batch 8, one Conv2dGradInput
// per engine, median of 9 runs, best of 3): deconvolution + both staging copies over im2col/col2im
// + OpenBLAS sgemm, as time ratios (< 1: the deconvolution is faster), each way forced through
// conv_grad_xnnpack_testing::set_choice() and timed on a BoundCase (tests/support/backend_compare.hpp).
//
//                                          1 thread   2 threads
//   ResNet-18 3x3 s1  64ch 32x32             0.87-0.91   0.66
//             3x3 s1 128ch 16x16             0.94-0.96   0.67
//             3x3 s1 256ch  8x8              1.10-1.18   0.74
//             3x3 s1 512ch  4x4              0.97-1.13   0.64
//             3x3 s2  64->128 32x32          1.13-1.15   0.78
//             3x3 s2 128->256 16x16          1.46-1.48   0.84
//             3x3 s2 256->512  8x8           1.12-1.14   0.52
//             1x1 s2 (downsample), 3 sizes   2.7-3.1     1.08-2.05
//   3x3 s1 64ch 8x8 / 128ch 8x8              0.58 / 0.77 0.46 / 0.41
//   3x3 s1 128ch 32x32 / 192ch / 256ch 16x16 0.95-1.00 / 0.98-1.00 / 1.28-1.38   0.90 / 0.81 / 1.15
//   5x5 s1 64ch 16x16 / 7x7 s1 32ch 16x16    0.71 / 0.51 0.49 / 0.32
//   3x3 s1 groups 2, 128ch / 512ch 8x8-16x16 0.77 / 1.14 0.49 / 0.78
//   3x3 s1 groups 32, 256ch 16x16 (8 per g)  1.47        0.47
//   3x3 s1 dilation 2, 64ch / 256ch          0.75 / 1.12 0.47 / 0.80
//   MobileNetV2 1x1 s1, planes 64x64-16x16   1.28-2.06   1.06-1.67
//   MobileNetV2 1x1 s1, planes 8x8-4x4       0.87-1.28   0.55-0.69
// So on one thread: stride 1, a kernel wider than 1x1, at least 16 channels per group, and a
// packed group weight up to 640 KB (XNNPACK's GEMM falls behind OpenBLAS's as the weight outgrows
// the caches: 256ch 3x3 is 2.4 MB). A 1x1 stride-1 gemm needs no unfolding while the deconvolution
// still pays both staging copies, and a strided deconvolution (split into subconvolutions) lost on
// every shape tried. On more threads the gemm way's per-image sgemms split poorly, so the
// deconvolution wins on small planes whatever the weight, and on larger ones up to a 2 MB group
// weight; a strided 1x1 still loses. The thresholds are this machine's: another cache size moves
// them, not the shape of the rule.
bool xnnpack_conv_grad_input_preferred(const ConvGeometry& g, size_t threads) {
  using conv_grad_xnnpack_testing::Choice;
  const Choice forced = conv_grad_xnnpack_testing::choice();
  if (forced != Choice::kByRule) return forced == Choice::kAlways;
  const bool pointwise = g.kernel_h == 1 && g.kernel_w == 1;
  const bool strided = g.stride_h > 1 || g.stride_w > 1;
  const int64_t group_weight_bytes =
      g.out_per_group() * g.in_per_group() * g.kernel_h * g.kernel_w * static_cast<int64_t>(sizeof(float));
  if (threads <= 1) {
    // 128ch 3x3 (576 KB) still wins, 160ch (900 KB) no longer; 8 channels per group lose.
    return !pointwise && !strided && group_weight_bytes <= (640 << 10) && g.out_per_group() >= 16 &&
           g.in_per_group() >= 16;
  }
  if (pointwise && strided) return false;
  return g.out_plane() <= 64 || (!pointwise && group_weight_bytes <= (2 << 20));
}

}  // namespace pock::cpu
