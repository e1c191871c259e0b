// Conv2dGradInput and Conv2dGradWeight on the cpu backend: prepare picks the first way that can
// run the op (conv_grad_kernel.hpp): direct loops for a depthwise layer (channels-last in scratch
// on small planes); for the input gradient of a dense 3x3 stride-1 layer of 64+ channels, oneDNN's
// Winograd or direct kernels when that way is on (conv_dnnl.hpp; off by default); for the input
// gradient of a dense 3x3 stride-1 layer, the backend's own Winograd where its rule picks it
// (conv_winograd.hpp); for the input gradient of a 1x1 layer with at most 64 output channels, the
// direct tiles of conv_pointwise.hpp; for the input gradient of a frozen weight, an XNNPACK
// deconvolution where it is the faster (conv_grad_xnnpack.hpp); else im2col/col2im + sgemm. An op none takes (a
// grouped convolution built without OpenBLAS) runs on ref.
#include <new>
#include <string>

#include "kernels/cpu/conv_algorithm_choice.hpp"
#include "kernels/cpu/conv_bf16.hpp"
#include "kernels/cpu/conv_dnnl.hpp"
#include "kernels/cpu/conv_grad_kernel.hpp"
#include "kernels/cpu/conv_grad_xnnpack.hpp"
#include "kernels/cpu/conv_pointwise.hpp"
#include "kernels/cpu/conv_winograd.hpp"
#include "kernels/cpu/cpu_families.hpp"
#include "kernels/cpu/cpu_util.hpp"
#include "kernels/cpu/thread_pool.hpp"

namespace pock::cpu {
namespace {

bool grad_input_accepts(const pock_op_desc& op) {
  ConvGeometry g;
  if (!conv_grad_input_geometry(op, &g)) return false;
  if (g.bf16) return bf16_conv_accepts(g);  // compute "bf16": conv_bf16.hpp's way alone
  return g.is_depthwise() || gemm_conv_grad_available();
}

bool grad_weight_accepts(const pock_op_desc& op) {
  ConvGeometry g;
  int64_t channels = 0;
  if (!conv_grad_weight_geometry(op, &g, &channels)) return false;
  if (g.bf16) return bf16_conv_accepts(g);
  return g.is_depthwise() || gemm_conv_grad_available();
}

Status bad_shapes(const pock_op_desc& op) {
  return Status(Code::kInvalidArgument, std::string(op.op) + " '" + op.name + "': bad shapes");
}

// Makes `kernel` the op's state; a null kernel means that no way took the op.
Status adopt(const pock_op_desc& op, std::unique_ptr<ConvKernel> kernel, void** state) {
  if (!kernel)
    return Status(Code::kMissingKernel, std::string(op.op) + " '" + op.name + "': no cpu way takes this shape");
  *state = kernel.release();
  return Status::ok();
}

Status grad_input_prepare(const pock_op_desc& op, KernelScope& scope, void** state) {
  ConvGeometry g;
  if (!conv_grad_input_geometry(op, &g)) return bad_shapes(op);
  Status status;
  if (g.bf16) {
    std::unique_ptr<ConvKernel> kernel = make_bf16_conv_grad_input(op, g, scope, &status);
    POCK_RETURN_IF_ERROR(status);
    return adopt(op, std::move(kernel), state);
  }
  // bf16 ones have one way; a blob tuned on this machine names the algorithm of the others
  // (pockc tune, compile --profile).
  if (names_conv_algorithm(op)) return prepare_chosen_conv(op, g, ConvDirection::kInputGrad, scope, state);
  std::unique_ptr<ConvKernel> kernel = make_channels_last_depthwise_grad_input(op, g, scope, &status);
  if (!kernel && status.is_ok()) kernel = make_depthwise_conv_grad_input(op, g, cpu_depthwise_grad_loops(), &status);
  // A 1x1 layer whose output has few channels: the direct tiles (conv_pointwise.hpp).
  if (!kernel && status.is_ok() && pointwise_preferred(g, ConvDirection::kInputGrad)) {
    kernel = make_pointwise_conv_grad_input(op, g, scope, &status);
  }
  // oneDNN (Winograd or direct) where its rule measured it faster, when it is on (conv_dnnl.cpp).
  if (!kernel && status.is_ok()) kernel = make_dnnl_conv_by_rule(op, g, ConvDirection::kInputGrad, scope, &status);
  // The backend's own Winograd where its rule measured it faster (conv_winograd.cpp).
  if (!kernel && status.is_ok()) {
    kernel = make_winograd_conv_by_rule(op, g, ConvDirection::kInputGrad, scope, &status);
  }
  // A frozen weight: XNNPACK packs it once; where its deconvolution is not the faster, or does not
  // take the shape, the gemm way runs the op.
  if (!kernel && status.is_ok() && is_constant(op.inputs[1]) &&
      xnnpack_conv_grad_input_preferred(g, thread_count(thread_pool_for(op.num_threads))))
    kernel = make_xnnpack_conv_grad_input(op, g, scope, &status);
  if (!kernel && status.is_ok()) kernel = make_gemm_conv_grad_input(op, g, scope, &status);
  POCK_RETURN_IF_ERROR(status);
  return adopt(op, std::move(kernel), state);
}

Status grad_weight_prepare(const pock_op_desc& op, KernelScope& scope, void** state) {
  ConvGeometry g;
  int64_t channels = 0;
  if (!conv_grad_weight_geometry(op, &g, &channels)) return bad_shapes(op);
  Status status;
  if (g.bf16) {
    std::unique_ptr<ConvKernel> kernel = make_bf16_conv_grad_weight(op, g, channels, scope, &status);
    POCK_RETURN_IF_ERROR(status);
    return adopt(op, std::move(kernel), state);
  }
  std::unique_ptr<ConvKernel> kernel = make_channels_last_depthwise_grad_weight(op, g, channels, scope, &status);
  if (!kernel && status.is_ok()) {
    kernel = make_depthwise_conv_grad_weight(op, g, channels, cpu_depthwise_grad_loops(), &status);
  }
  if (!kernel && status.is_ok()) kernel = make_gemm_conv_grad_weight(op, g, channels, scope, &status);
  POCK_RETURN_IF_ERROR(status);
  return adopt(op, std::move(kernel), state);
}

Status run(const KernelCall& c) { return static_cast<ConvKernel*>(c.state)->run(c); }
void release(void* state) { delete static_cast<ConvKernel*>(state); }

KernelDef def(const char* op, KernelScopedPrepareFn prepare, bool (*accepts)(const pock_op_desc&)) {
  KernelDef d{op, DType::kF32, run, kCpuScore, nullptr, release};
  d.prepare_scoped = prepare;
  d.accepts = accepts;
  return d;
}

}  // namespace

KernelDef conv_grad_input_def(const char* op) { return def(op, grad_input_prepare, grad_input_accepts); }

void register_conv_grad(KernelTable& t) {
  t.add(conv_grad_input_def("Conv2dGradInput"));
  t.add(def("Conv2dGradWeight", grad_weight_prepare, grad_weight_accepts));
}

}  // namespace pock::cpu
