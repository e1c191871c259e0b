// Conv2d with a frozen weight through XNNPACK (NHWC f32). At prepare: the OIHW weight is repacked
// to XNNPACK's filter layout and handed to xnn_create_convolution2d_nhwc_f32, which packs it
// again into the operator. A run is: NCHW -> NHWC copy, xnn_run_operator, NHWC -> NCHW copy with
// the bias added and the activation applied on the way — the bias stays outside the operator so
// that a trainable bias (bias-only fine-tuning) is read fresh every step.
//
// Memory follows the plan, not the op count (issue #7): the NHWC staging buffers are the backend
// instance's one scratch region (runtime/kernel_scope.hpp), sized to the largest convolution, and
// the operator — the packed weight — is made once per engine for each (weight address, geometry)
// and shared by every op instance that asks for it: the train, eval and infer functions each bind
// their own copy of every frozen layer. The scratch region can move while later ops are
// prepared, so the operator is set up again on a run that finds it bound to an old address: once,
// on the first run, with unchanged sizes (XNNPACK then reuses its indirection buffer).
//
// A channels-last op (layout "NHWC", set by the compiler's layout pass on chains of frozen
// convolutions) needs no staging: the operator reads x and writes y where the arena holds them.
// A constant bias and the fused activation then go into the operator too (its output clamp), so a
// run is the library call alone; a trainable bias is added, and the activation applied, in one
// pass over y afterwards. The shared operator is bound to the input and output addresses of the op
// instance that ran it last; another instance re-binds it (same sizes: no allocation).
#include "kernels/cpu/conv_kernel.hpp"

#ifdef POCK_HAVE_XNNPACK
#include <xnnpack.h>

#include <cmath>
#include <memory>
#include <new>
#include <string>

#include "kernels/cpu/activation_epilogue.hpp"
#include "kernels/cpu/cpu_util.hpp"
#include "kernels/cpu/layout.hpp"
#include "kernels/cpu/thread_pool.hpp"
#include "kernels/params/conv.hpp"
#include "runtime/mapped_file.hpp"

namespace pock::cpu {

bool xnnpack_conv_available() {
  static const bool ready = xnn_initialize(nullptr) == xnn_status_success;
  return ready;
}

namespace {

bool fits_u32(int64_t v) { return v >= 0 && v <= int64_t{0xFFFFFFFF}; }

// XNNPACK's filter layouts: [O][kh][kw][C/g] for a grouped convolution, [kh][kw][O] (HWGo) for a
// depthwise one.
void repack_filter(const float* oihw, const ConvGeometry& g, bool depthwise, float* out) {
  const int64_t taps = g.kernel_h * g.kernel_w;
  const int64_t cg = g.in_per_group();
  for (int64_t o = 0; o < g.out_channels; ++o) {
    for (int64_t c = 0; c < cg; ++c) {
      for (int64_t t = 0; t < taps; ++t) {
        const float v = oihw[(o * cg + c) * taps + t];
        const int64_t at = depthwise ? t * g.out_channels + o : (o * taps + t) * cg + c;
        out[at] = v;
      }
    }
  }
}

// One XNNPACK operator (it owns the packed weight), shared by the op instances of one engine that
// convolve the same constant weight with the same geometry.
struct SharedOperator {
  // Where the operator was last set up to read and write.
  bool bound_to(const float* in, const float* out) const { return bound_in == in && bound_out == out; }
  SharedOperator() = default;
  SharedOperator(const SharedOperator&) = delete;
  SharedOperator& operator=(const SharedOperator&) = delete;
  ~SharedOperator() {
    if (op) xnn_delete_operator(op);
  }
  xnn_operator_t op = nullptr;
  const float* bound_in = nullptr;
  const float* bound_out = nullptr;
};

size_t round_up_64(size_t v) { return (v + 63) / 64 * 64; }

// Everything the operator depends on: the weight's address (constant while the engine is open:
// the same address is the same weight) and every extent the operator or its set-up reads.
// `bias` is the bias inside the operator (null when it stays outside), `clamp` the activation
// folded into its output range.
std::string operator_key(const void* weight, const void* bias, Activation clamp, const ConvGeometry& g,
                         pthreadpool_t pool) {
  std::string key = "xnnpack.conv2d";
  for (int64_t v : {reinterpret_cast<int64_t>(weight), reinterpret_cast<int64_t>(bias), static_cast<int64_t>(clamp),
                    reinterpret_cast<int64_t>(pool), g.batch, g.in_channels, g.in_h,
                    g.in_w, g.out_channels, g.out_h, g.out_w, g.kernel_h, g.kernel_w, g.stride_h, g.stride_w,
                    g.dilation_h, g.dilation_w, g.pad_top, g.pad_left, g.pad_bottom, g.pad_right, g.groups}) {
    key += ' ';
    key += std::to_string(v);
  }
  return key;
}

class XnnpackConv final : public ConvKernel {
 public:
  XnnpackConv(const ConvGeometry& g, KernelScope& scope, bool nhwc) : g_(g), scope_(&scope), nhwc_(nhwc) {}

  // Returns false (with *status OK) when XNNPACK rejects the parameters.
  bool init(const pock_op_desc& op, Status* status) {
    pool_ = thread_pool_for(op.num_threads);
    if (nhwc_) return init_nhwc(op, status);
    // Scratch: the NHWC input, then the NHWC output. XNNPACK kernels may read (never use) up to
    // XNN_EXTRA_BYTES past the end of their input — the output region, or the tail after it.
    const size_t in_bytes = static_cast<size_t>(g_.batch * g_.in_channels * g_.in_plane()) * sizeof(float);
    const size_t out_bytes = static_cast<size_t>(g_.batch * g_.out_channels * g_.out_plane()) * sizeof(float);
    output_offset_ = round_up_64(in_bytes);
    *status = scope_->reserve_scratch(output_offset_ + out_bytes + XNN_EXTRA_BYTES, "Conv2d NHWC scratch");
    if (!status->is_ok()) return false;

    if (!find_or_create_operator(op, nullptr, Activation::kNone, status)) return false;
    // Set up here so that the first run finds XNNPACK's per-size state made; run() re-binds it only
    // if a later prepare moved the scratch region.
    *status = bind(op.name, input(), output());
    return status->is_ok();
  }

  Status run(const KernelCall& c) override {
    if (nhwc_) return run_nhwc(c);
    if (!shared_->bound_to(input(), output())) POCK_RETURN_IF_ERROR(bind(c.desc->name, input(), output()));
    nchw_to_nhwc(c.in_data<float>(0), input(), g_.batch, g_.in_channels, g_.in_plane(), pool_);
    const xnn_status s = xnn_run_operator(shared_->op, pool_);
    if (s != xnn_status_success) {
      return c.error("xnn_run_operator failed (" + std::to_string(static_cast<int>(s)) + ")");
    }
    const float* bias = g_.has_bias ? c.in_data<float>(2) : nullptr;
    // The bias (outside the operator, see the top of this file) and then the activation ride along.
    nhwc_to_nchw(output(), bias, c.out_data<float>(0), g_.batch, g_.out_channels, g_.out_plane(), pool_,
                 g_.activation);
    return Status::ok();
  }

 private:
  // The operator for this weight, bias and clamp: another op instance's, or a new one shared from now.
  bool find_or_create_operator(const pock_op_desc& op, const float* bias, Activation clamp, Status* status) {
    const std::string key = operator_key(op.inputs[1].data, bias, clamp, g_, pool_);
    shared_ = std::static_pointer_cast<SharedOperator>(scope_->find_shared(key));
    if (shared_) return true;
    if (!create_operator(op, bias, clamp, status)) return false;
    if (!scope_->put_shared(key, shared_)) {
      *status = Status(Code::kOutOfMemory, "Conv2d XNNPACK operator cache");
      return false;
    }
    return true;
  }

  // Channels-last: no scratch. A constant bias and the activation go into the operator.
  bool init_nhwc(const pock_op_desc& op, Status* status) {
    const bool bias_inside = g_.has_bias && is_constant(op.inputs[2]);
    outside_bias_ = g_.has_bias && !bias_inside;
    const float* bias = bias_inside ? static_cast<const float*>(op.inputs[2].data) : nullptr;
    // With the bias outside, the activation must follow it, so it stays outside too.
    const Activation clamp = outside_bias_ ? Activation::kNone : g_.activation;
    outside_activation_ = outside_bias_ ? g_.activation : Activation::kNone;
    if (!find_or_create_operator(op, bias, clamp, status)) return false;
    *status = bind(op.name, static_cast<const float*>(op.inputs[0].data), static_cast<float*>(op.outputs[0].data));
    return status->is_ok();
  }

  Status run_nhwc(const KernelCall& c) {
    const float* x = c.in_data<float>(0);
    float* y = c.out_data<float>(0);
    if (!shared_->bound_to(x, y)) POCK_RETURN_IF_ERROR(bind(c.desc->name, x, y));
    const xnn_status s = xnn_run_operator(shared_->op, pool_);
    if (s != xnn_status_success) {
      return c.error("xnn_run_operator failed (" + std::to_string(static_cast<int>(s)) + ")");
    }
    if (!outside_bias_) return Status::ok();
    // A trainable bias, read fresh: y[p][o] = act(y[p][o] + b[o]) over the pixels of every image.
    const float* bias = c.in_data<float>(2);
    const int64_t channels = g_.out_channels;
    const size_t pixels = static_cast<size_t>(g_.batch * g_.out_plane());
    parallel_for(pool_, pixels, balanced_tile(pool_, pixels, 64), [&](size_t begin, size_t end) {
      for (size_t p = begin; p < end; ++p) {
        float* row = y + static_cast<int64_t>(p) * channels;
        for (int64_t o = 0; o < channels; ++o) row[o] += bias[o];
        if (outside_activation_ != Activation::kNone) apply_activation_inplace(outside_activation_, row, channels);
      }
    });
    return Status::ok();
  }

  bool create_operator(const pock_op_desc& op, const float* bias, Activation clamp, Status* status) {
    shared_ = std::shared_ptr<SharedOperator>(new (std::nothrow) SharedOperator());
    if (!shared_) {
      *status = Status(Code::kOutOfMemory, "Conv2d XNNPACK operator");
      return false;
    }
    const bool depthwise = g_.is_depthwise();
    // Only needed until the operator has packed it.
    AlignedBuffer filter;
    *status = filter.allocate(op.inputs[1].nbytes, "Conv2d filter repack");
    if (!status->is_ok()) return false;
    float* filter_data = reinterpret_cast<float*>(filter.data());
    repack_filter(static_cast<const float*>(op.inputs[1].data), g_, depthwise, filter_data);
    const xnn_status created = xnn_create_convolution2d_nhwc_f32(
        static_cast<uint32_t>(g_.pad_top), static_cast<uint32_t>(g_.pad_right), static_cast<uint32_t>(g_.pad_bottom),
        static_cast<uint32_t>(g_.pad_left), static_cast<uint32_t>(g_.kernel_h), static_cast<uint32_t>(g_.kernel_w),
        static_cast<uint32_t>(g_.stride_h), static_cast<uint32_t>(g_.stride_w), static_cast<uint32_t>(g_.dilation_h),
        static_cast<uint32_t>(g_.dilation_w), static_cast<uint32_t>(g_.groups), static_cast<size_t>(g_.in_per_group()),
        static_cast<size_t>(g_.out_per_group()), static_cast<size_t>(g_.in_channels),
        static_cast<size_t>(g_.out_channels), filter_data, bias, clamp == Activation::kNone ? -INFINITY : 0.0f,
        clamp == Activation::kRelu6 ? 6.0f : INFINITY,
        // Yield workers after each run, as parallel_for does (thread_pool.hpp).
        (depthwise ? XNN_FLAG_DEPTHWISE_CONVOLUTION : 0) | XNN_FLAG_YIELD_WORKERS, &shared_->op);
    if (created != xnn_status_success) {
      shared_->op = nullptr;
      shared_.reset();
      return false;  // e.g. a shape outside what this XNNPACK build supports: another way runs it
    }
    return true;
  }

  // Sets the shared operator up to read `in` and write `out`.
  Status bind(const char* op_name, const float* in, float* out) {
    const xnn_status set_up = xnn_setup_convolution2d_nhwc_f32(
        shared_->op, static_cast<size_t>(g_.batch), static_cast<size_t>(g_.in_h), static_cast<size_t>(g_.in_w), in, out,
        pool_);
    if (set_up != xnn_status_success) {
      shared_->bound_in = shared_->bound_out = nullptr;
      return Status(Code::kInternal, std::string("Conv2d '") + op_name +
                                         "': xnn_setup_convolution2d_nhwc_f32 failed (" +
                                         std::to_string(static_cast<int>(set_up)) + ")");
    }
    shared_->bound_in = in;
    shared_->bound_out = out;
    return Status::ok();
  }

  float* input() const { return reinterpret_cast<float*>(scope_->scratch()); }
  float* output() const { return reinterpret_cast<float*>(scope_->scratch() + output_offset_); }

  ConvGeometry g_;
  KernelScope* scope_;
  pthreadpool_t pool_ = nullptr;
  size_t output_offset_ = 0;  // of the NHWC output in the scratch region
  bool nhwc_ = false;         // x and y are channels-last: no staging
  bool outside_bias_ = false; // channels-last with a trainable bias: added after the run
  Activation outside_activation_ = Activation::kNone;  // applied after that bias
  std::shared_ptr<SharedOperator> shared_;
};

}  // namespace

std::unique_ptr<ConvKernel> make_xnnpack_conv(const pock_op_desc& op, const ConvGeometry& g, KernelScope& scope,
                                              Status* status) {
  *status = Status::ok();
  if (!xnnpack_conv_available() || !is_constant(op.inputs[1])) return nullptr;
  for (int64_t v : {g.pad_top, g.pad_left, g.pad_bottom, g.pad_right, g.kernel_h, g.kernel_w, g.stride_h, g.stride_w,
                    g.dilation_h, g.dilation_w, g.groups}) {
    if (!fits_u32(v)) return nullptr;
  }
  if (g.batch == 0 || g.in_plane() == 0 || g.out_plane() == 0 || g.out_channels == 0) return nullptr;
  params::WindowParams p;
  *status = params::parse(op, &p);
  if (!status->is_ok()) return nullptr;
  const bool nhwc = p.nhwc;
  auto conv = std::unique_ptr<XnnpackConv>(new (std::nothrow) XnnpackConv(g, scope, nhwc));
  if (!conv) {
    *status = Status(Code::kOutOfMemory, "Conv2d XNNPACK state");
    return nullptr;
  }
  if (!conv->init(op, status)) return nullptr;
  return conv;
}

}  // namespace pock::cpu

#else  // built without XNNPACK

namespace pock::cpu {

bool xnnpack_conv_available() { return false; }

std::unique_ptr<ConvKernel> make_xnnpack_conv(const pock_op_desc&, const ConvGeometry&, KernelScope&, Status* status) {
  *status = Status::ok();
  return nullptr;
}

}  // namespace pock::cpu

#endif
