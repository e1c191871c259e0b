#include "kernels/cpu/conv_algorithm_choice.hpp"

#include <array>
#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "kernels/cpu/conv_grad_kernel.hpp"
#include "kernels/cpu/conv_grad_xnnpack.hpp"
#include "kernels/cpu/conv_pointwise.hpp"
#include "kernels/cpu/conv_winograd.hpp"
#include "kernels/params/conv.hpp"
#include "kernels/params/conv_algorithm.hpp"

namespace pock::cpu {
namespace {

std::array<std::atomic<int>, kConvAlgorithms.size()> made{};

using Maker = std::unique_ptr<ConvKernel> (*)(const pock_op_desc&, const ConvGeometry&, KernelScope&, Status*);

// By ConvAlgorithm (ir/conv_algorithm.hpp order): the forward way, then the input gradient's. The
// input gradient's im2col way is im2col's adjoint: sgemm, then col2im (conv_grad_gemm.cpp). The
// depthwise way is the backend's own direct loops in the layout its rule picks for the shape:
// channels-last in scratch on small planes (depthwise_channels_last.hpp), NCHW rows otherwise. The
// pointwise way is the direct 1x1 tiles of conv_pointwise.hpp.
constexpr std::array<std::array<Maker, 2>, kConvAlgorithms.size()> kMakers = {{
    {make_im2col_conv, make_gemm_conv_grad_input},
    {[](const pock_op_desc& op, const ConvGeometry& g, KernelScope& scope, Status* status) {
       return make_winograd_conv(op, g, ConvDirection::kForward, scope, status);
     },
     [](const pock_op_desc& op, const ConvGeometry& g, KernelScope& scope, Status* status) {
       return make_winograd_conv(op, g, ConvDirection::kInputGrad, scope, status);
     }},
    {make_xnnpack_conv, make_xnnpack_conv_grad_input},
    {[](const pock_op_desc& op, const ConvGeometry& g, KernelScope& scope, Status* status) {
       std::unique_ptr<ConvKernel> kernel = make_channels_last_depthwise_conv(op, g, scope, status);
       if (kernel || !status->is_ok()) return kernel;
       return make_depthwise_conv(op, g, scope, status);
     },
     [](const pock_op_desc& op, const ConvGeometry& g, KernelScope& scope, Status* status) {
       std::unique_ptr<ConvKernel> kernel = make_channels_last_depthwise_grad_input(op, g, scope, status);
       if (kernel || !status->is_ok()) return kernel;
       return make_depthwise_conv_grad_input(op, g, cpu_depthwise_grad_loops(), status);
     }},
    {make_pointwise_conv, make_pointwise_conv_grad_input},
}};

// What each way needs, for the message of an op it cannot run.
const char* requirement(ConvAlgorithm a) {
  switch (a) {
    case ConvAlgorithm::kIm2col: return "a build with OpenBLAS";
    case ConvAlgorithm::kWinograd: return "a 3x3, stride-1, undilated convolution of one group, pads <= 2, and OpenBLAS";
    case ConvAlgorithm::kXnnpack: return "a frozen weight, a build with XNNPACK and a shape XNNPACK takes";
    case ConvAlgorithm::kDepthwise: return "one input channel per group";
    case ConvAlgorithm::kPointwise: return "a 1x1, stride-1, unpadded convolution of one group";
  }
  return "";
}

Status cannot_run(const pock_op_desc& op, ConvAlgorithm a, const std::string& why) {
  return Status(Code::kMissingKernel, std::string(op.op) + " '" + op.name + "': the blob asks for the cpu algorithm " +
                                          conv_algorithm_name(a) + ", which " + why +
                                          " (recompile without that profile, or tune again on this build)");
}

}  // namespace

bool names_conv_algorithm(const pock_op_desc& op) {
  for (int32_t i = 0; i < op.num_attrs; ++i) {
    if (op.attrs[i].name && std::string_view(op.attrs[i].name) == kConvAlgorithmAttr) return true;
  }
  return false;
}

Status prepare_chosen_conv(const pock_op_desc& op, const ConvGeometry& g, ConvDirection direction, KernelScope& scope,
                           void** state) {
  std::optional<ConvAlgorithm> algorithm;
  POCK_RETURN_IF_ERROR(params::parse(op, &algorithm));
  if (!algorithm) return Status(Code::kInvalidArgument, std::string(op.op) + " '" + op.name + "': no cpu algorithm named");
  params::WindowParams window;
  POCK_RETURN_IF_ERROR(params::parse(op, &window));
  // Only XNNPACK reads channels-last images; the other ways would read them as NCHW.
  if (window.nhwc && *algorithm != ConvAlgorithm::kXnnpack) return cannot_run(op, *algorithm, "reads only NCHW images");
  Status status;
  const Maker make = kMakers[static_cast<size_t>(*algorithm)][direction == ConvDirection::kForward ? 0 : 1];
  std::unique_ptr<ConvKernel> kernel = make(op, g, scope, &status);
  POCK_RETURN_IF_ERROR(status);
  if (!kernel) {
    return cannot_run(op, *algorithm, std::string("cannot run this convolution here: it needs ") + requirement(*algorithm));
  }
  ++made[static_cast<size_t>(*algorithm)];
  *state = kernel.release();
  return Status::ok();
}

namespace conv_algorithm_testing {
int kernels_made(ConvAlgorithm algorithm) { return made[static_cast<size_t>(algorithm)].load(); }
}  // namespace conv_algorithm_testing

}  // namespace pock::cpu
