// Conv2d and Conv2dGradInput through oneDNN (conv_dnnl.hpp): a convolution primitive (forward or
// backward data) with its source, weight and destination in the layouts oneDNN prefers, reorders
// from and to NCHW around it, and oneDNN's own scratchpad, all placed in the engine's scratch.
#include "kernels/cpu/conv_dnnl.hpp"

#include <atomic>
#include <cstdlib>
#include <string_view>
#include <new>
#include <optional>
#include <string>
#include <unordered_map>

#include "kernels/cpu/activation_epilogue.hpp"
#include "kernels/cpu/dnnl_threads.hpp"

#ifdef POCK_HAVE_DNNL
#include <oneapi/dnnl/dnnl.hpp>
#endif

namespace pock::cpu {
namespace {

// Off by default: oneDNN allocates on the heap in every primitive execution (its argument maps:
// 30-40 mallocs per run), which breaks the engine's promise that training steps allocate nothing
// (tests/train/test_zoo_step_no_alloc.cpp). An app that accepts the allocations for the speed sets
// POCK_CPU_CONV=onednn (read once, at load), which applies the rule below; tests set it directly.
conv_dnnl_testing::Choice choice_from_environment() {
  const char* v = std::getenv("POCK_CPU_CONV");
  return v && std::string_view(v) == "onednn" ? conv_dnnl_testing::Choice::kByRule : conv_dnnl_testing::Choice::kNever;
}
std::atomic<conv_dnnl_testing::Choice> forced{choice_from_environment()};
std::atomic<int> made_direct{0}, made_winograd{0};

// The speed rule, measured on one core of the benchmark machine (AMD EPYC, AVX-512) at batch 8 on
// ResNet-18's 3x3 stride-1 layers at 128x128 (each 0.60 GFLOP of direct convolution), reorders
// from and to NCHW included, weight reorder apart (forward / input gradient, ms):
//   64 ch at 32x32:  Winograd 2.7 / 2.8, oneDNN direct 5.7 / 5.8
//   128 ch at 16x16: Winograd 2.7 / 2.8, oneDNN direct 5.3 / 5.2
//   256 ch at 8x8:   Winograd 3.9 / 4.0, oneDNN direct 5.0 / 5.0
//   512 ch at 4x4:   Winograd 8.4 / 9.7, oneDNN direct 5.1 / 5.0 (+1.5 weight reorder)
// The other ways (XNNPACK, im2col / col2im + OpenBLAS) ran these layers at 87-88 GFLOP/s on
// average (6.9 ms), layer3 in 6.6-6.9 ms and layer4 in 9-11 ms (benchmarks/RESULTS.md).
// Winograd's tiles are 4x4 outputs: on a 4x4 plane with padding each tile reads a 6x6 input mostly
// of zeros and the transforms no longer pay; there oneDNN's direct kernels win. Shapes with fewer
// than 64 channels were not measured and keep the other ways.
std::optional<DnnlConvAlgorithm> rule(const ConvGeometry& g) {
  const bool dense_3x3 = g.groups == 1 && g.kernel_h == 3 && g.kernel_w == 3 && g.stride_h == 1 && g.stride_w == 1 &&
                         g.dilation_h == 1 && g.dilation_w == 1;
  if (!dense_3x3 || g.in_channels < 64 || g.out_channels < 64) return std::nullopt;
  return g.out_plane() >= 64 ? DnnlConvAlgorithm::kWinograd : DnnlConvAlgorithm::kDirect;
}

std::optional<DnnlConvAlgorithm> choice(const ConvGeometry& g) {
  switch (forced.load()) {
    case conv_dnnl_testing::Choice::kDirect: return DnnlConvAlgorithm::kDirect;
    case conv_dnnl_testing::Choice::kWinograd: return DnnlConvAlgorithm::kWinograd;
    case conv_dnnl_testing::Choice::kNever: return std::nullopt;
    case conv_dnnl_testing::Choice::kByRule: break;
  }
  return rule(g);
}

}  // namespace

namespace conv_dnnl_testing {
void set_choice(Choice c) { forced = c; }
int kernels_made(DnnlConvAlgorithm algorithm) {
  return algorithm == DnnlConvAlgorithm::kWinograd ? made_winograd.load() : made_direct.load();
}
}  // namespace conv_dnnl_testing

std::unique_ptr<ConvKernel> make_dnnl_conv_by_rule(const pock_op_desc& op, const ConvGeometry& g,
                                                   ConvDirection direction, KernelScope& scope, Status* status) {
  *status = Status::ok();
  const std::optional<DnnlConvAlgorithm> algorithm = choice(g);
  if (!algorithm) return nullptr;
  return make_dnnl_conv(op, g, direction, *algorithm, scope, status);
}

#ifdef POCK_HAVE_DNNL

namespace {

using dt = dnnl::memory::data_type;
using tag = dnnl::memory::format_tag;

// Bytes from the scratch start, each block 64-byte aligned (oneDNN's blocked kernels load whole
// cache lines).
size_t place(size_t* end, const dnnl::memory::desc& md) {
  const size_t at = (*end + 63) / 64 * 64;
  *end = at + md.get_size();
  return at;
}

// One operand: the tensor as the op holds it (NCHW / OIHW) and as the primitive reads or writes
// it. Where the two layouts agree no reorder runs and the primitive uses the op's buffer.
struct Operand {
  dnnl::memory user, inner;
  std::optional<dnnl::reorder> to_inner, to_user;
  size_t offset = 0;

  Operand(const dnnl::engine& engine, const dnnl::memory::desc& user_md, const dnnl::memory::desc& inner_md,
          bool is_output, size_t* scratch_end)
      : user(user_md, engine, DNNL_MEMORY_NONE) {
    if (user_md == inner_md) {
      inner = user;
      return;
    }
    inner = dnnl::memory(inner_md, engine, DNNL_MEMORY_NONE);
    offset = place(scratch_end, inner_md);
    if (is_output) {
      to_user = dnnl::reorder(dnnl::reorder::primitive_desc(engine, inner_md, engine, user_md));
    } else {
      to_inner = dnnl::reorder(dnnl::reorder::primitive_desc(engine, user_md, engine, inner_md));
    }
  }

  void bind(void* data, uint8_t* scratch) {
    user.set_data_handle(data);
    if (to_inner || to_user) inner.set_data_handle(scratch + offset);
  }
};

class DnnlConv final : public ConvKernel {
 public:
  DnnlConv(const ConvGeometry& g, ConvDirection direction, int threads, KernelScope& scope)
      : g_(g), direction_(direction), threads_(threads), scope_(&scope) {}

  // Throws dnnl::error when oneDNN has no kernel for the convolution.
  void build(DnnlConvAlgorithm algorithm) {
    const dnnl::memory::dims x_dims{g_.batch, g_.in_channels, g_.in_h, g_.in_w};
    const dnnl::memory::dims w_dims{g_.out_channels, g_.in_channels, g_.kernel_h, g_.kernel_w};
    const dnnl::memory::dims y_dims{g_.batch, g_.out_channels, g_.out_h, g_.out_w};
    const dnnl::memory::dims strides{g_.stride_h, g_.stride_w};
    const dnnl::memory::dims dilations{g_.dilation_h - 1, g_.dilation_w - 1};  // oneDNN counts the gaps
    const dnnl::memory::dims pad_l{g_.pad_top, g_.pad_left}, pad_r{g_.pad_bottom, g_.pad_right};
    const dnnl::memory::desc x_any(x_dims, dt::f32, tag::any), w_any(w_dims, dt::f32, tag::any),
        y_any(y_dims, dt::f32, tag::any);
    const dnnl::algorithm alg = algorithm == DnnlConvAlgorithm::kWinograd ? dnnl::algorithm::convolution_winograd
                                                                          : dnnl::algorithm::convolution_direct;
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    const bool bias = direction_ == ConvDirection::kForward && g_.has_bias;
    const dnnl::memory::desc b_md({g_.out_channels}, dt::f32, tag::x);
    const auto forward_desc =
        bias ? dnnl::convolution_forward::desc(dnnl::prop_kind::forward_training, alg, x_any, w_any, b_md, y_any,
                                               strides, dilations, pad_l, pad_r)
             : dnnl::convolution_forward::desc(dnnl::prop_kind::forward_training, alg, x_any, w_any, y_any, strides,
                                               dilations, pad_l, pad_r);
    const dnnl::convolution_forward::primitive_desc forward(forward_desc, attr, engine_);
    const dnnl::memory::desc x_user(x_dims, dt::f32, tag::nchw), w_user(w_dims, dt::f32, tag::oihw),
        y_user(y_dims, dt::f32, tag::nchw);
    size_t end = 0;
    dnnl::memory::desc scratchpad_md;
    if (direction_ == ConvDirection::kForward) {
      primitive_ = dnnl::convolution_forward(forward);
      in_.emplace(engine_, x_user, forward.src_desc(), false, &end);
      weight_.emplace(engine_, w_user, forward.weights_desc(), false, &end);
      out_.emplace(engine_, y_user, forward.dst_desc(), true, &end);
      scratchpad_md = forward.scratchpad_desc();
      args_ = {{DNNL_ARG_SRC, in_->inner}, {DNNL_ARG_WEIGHTS, weight_->inner}, {DNNL_ARG_DST, out_->inner}};
    } else {
      const dnnl::convolution_backward_data::primitive_desc backward(
          dnnl::convolution_backward_data::desc(alg, x_any, w_any, y_any, strides, dilations, pad_l, pad_r), attr,
          engine_, forward);
      primitive_ = dnnl::convolution_backward_data(backward);
      in_.emplace(engine_, y_user, backward.diff_dst_desc(), false, &end);
      weight_.emplace(engine_, w_user, backward.weights_desc(), false, &end);
      out_.emplace(engine_, x_user, backward.diff_src_desc(), true, &end);
      scratchpad_md = backward.scratchpad_desc();
      args_ = {{DNNL_ARG_DIFF_DST, in_->inner}, {DNNL_ARG_WEIGHTS, weight_->inner}, {DNNL_ARG_DIFF_SRC, out_->inner}};
    }
    scratchpad_ = dnnl::memory(scratchpad_md, engine_, DNNL_MEMORY_NONE);
    scratchpad_offset_ = place(&end, scratchpad_md);
    args_.emplace(DNNL_ARG_SCRATCHPAD, scratchpad_);
    if (bias) {
      bias_ = dnnl::memory(b_md, engine_, DNNL_MEMORY_NONE);
      args_.emplace(DNNL_ARG_BIAS, bias_);
    }
    scratch_bytes_ = end;
  }

  size_t scratch_bytes() const { return scratch_bytes_; }

  Status run(const KernelCall& c) override {
    set_dnnl_threads(threads_);
    // Read at run time: the region may move while later ops are prepared.
    uint8_t* scratch = scope_->scratch();
    // oneDNN reads sources through non-const handles but never writes them.
    in_->bind(const_cast<float*>(c.in_data<float>(0)), scratch);
    weight_->bind(const_cast<float*>(c.in_data<float>(1)), scratch);
    float* out = c.out_data<float>(0);
    out_->bind(out, scratch);
    scratchpad_.set_data_handle(scratch + scratchpad_offset_);
    const bool bias = direction_ == ConvDirection::kForward && g_.has_bias;
    if (bias) bias_.set_data_handle(const_cast<float*>(c.in_data<float>(2)));
    try {
      if (in_->to_inner) in_->to_inner->execute(stream_, in_->user, in_->inner);
      if (weight_->to_inner) weight_->to_inner->execute(stream_, weight_->user, weight_->inner);
      primitive_.execute(stream_, args_);
      if (out_->to_user) out_->to_user->execute(stream_, out_->inner, out_->user);
      stream_.wait();
    } catch (const dnnl::error& e) {
      return Status(Code::kInternal, std::string(c.desc->op) + " '" + c.desc->name + "': oneDNN failed: " + e.what());
    }
    if (direction_ == ConvDirection::kForward) {
      apply_activation_inplace(g_.activation, out, g_.batch * g_.out_channels * g_.out_plane());
    }
    return Status::ok();
  }

 private:
  ConvGeometry g_;
  ConvDirection direction_;
  int threads_;
  KernelScope* scope_;
  dnnl::engine engine_{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream_{engine_};
  dnnl::primitive primitive_;
  std::optional<Operand> in_, weight_, out_;  // x (dy), w, y (dx)
  dnnl::memory bias_, scratchpad_;
  size_t scratchpad_offset_ = 0, scratch_bytes_ = 0;
  std::unordered_map<int, dnnl::memory> args_;  // made once: the handles above share their memories
};

}  // namespace

std::unique_ptr<ConvKernel> make_dnnl_conv(const pock_op_desc& op, const ConvGeometry& g, ConvDirection direction,
                                           DnnlConvAlgorithm algorithm, KernelScope& scope, Status* status) {
  *status = Status::ok();
  std::unique_ptr<DnnlConv> conv;
  // oneDNN splits the work for the thread count it sees when the primitive is made, not when it
  // runs: a primitive made under OpenMP's default would run on every core.
  set_dnnl_threads(op.num_threads);
  try {
    conv = std::make_unique<DnnlConv>(g, direction, op.num_threads, scope);
    conv->build(algorithm);
  } catch (const dnnl::error&) {
    return nullptr;  // no oneDNN kernel for this convolution here: the caller tries its next way
  } catch (const std::bad_alloc&) {
    *status = Status(Code::kOutOfMemory, std::string(op.op) + " '" + op.name + "': oneDNN convolution state");
    return nullptr;
  }
  *status = scope.reserve_scratch(conv->scratch_bytes(), "oneDNN convolution scratch");
  if (!status->is_ok()) return nullptr;
  ++(algorithm == DnnlConvAlgorithm::kWinograd ? made_winograd : made_direct);
  return conv;
}

#else  // built without oneDNN

std::unique_ptr<ConvKernel> make_dnnl_conv(const pock_op_desc&, const ConvGeometry&, ConvDirection, DnnlConvAlgorithm,
                                           KernelScope&, Status* status) {
  *status = Status::ok();
  return nullptr;
}

#endif

}  // namespace pock::cpu
