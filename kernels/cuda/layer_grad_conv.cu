// The CUDA conv backward ops: Conv2dGradInput and Conv2dGradWeight through cuDNN (conv_plan.hpp);
// a weight gradient for only the first output channels (dw's leading extent below dy's channels)
// is computed in full into the workspace and its leading part copied out. Conv2dGradBias a team
// per channel; AvgPool2dGrad a thread per input element (gathering, deterministic);
// MaxPool2dGrad a thread per window adding dy at the forward's pick (atomics: overlapping
// windows may pick the same element, in no fixed order). Logic in conv_logic.hpp, checked on
// the host by tests/cuda_logic/test_conv_logic.cpp.
#include "kernels/cuda/conv_logic.hpp"
#include "kernels/cuda/conv_op.hpp"
#include "kernels/cuda/cuda_families.hpp"
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/launch_status.hpp"
#include "kernels/cuda/row_team.cuh"

namespace pock::cuda {
namespace {

// Conv2dGradInput(dy, w) -> dx: the forward's x is dx, its y is dy.
ConvShapes grad_input_shapes(const pock_op_desc& op) {
  const pock_tensor_desc& w = op.inputs[1];
  return conv_shapes(op.outputs[0], w.dims[0], w.dims[2], w.dims[3], op.inputs[0]);
}

// Conv2dGradWeight(x, dy) -> dw [channels, C / groups, kh, kw]: the plan covers all of dy's
// output channels.
ConvShapes grad_weight_shapes(const pock_op_desc& op) {
  const pock_tensor_desc& dw = op.outputs[0];
  return conv_shapes(op.inputs[0], op.inputs[1].dims[1], dw.dims[2], dw.dims[3], op.inputs[1]);
}

// The full weight gradient, when dw keeps only the leading output channels.
size_t full_weight_bytes(const pock_op_desc& op) {
  const pock_tensor_desc& dw = op.outputs[0];
  const int64_t out_channels = op.inputs[1].dims[1];
  if (dw.dims[0] == out_channels || dw.dims[0] == 0) return 0;
  return static_cast<size_t>(numel(dw) / dw.dims[0] * out_channels) * sizeof(float);
}

Status conv2d_grad_input(const KernelCall& c) {
  const ConvOp& op = *static_cast<const ConvOp*>(c.state);
  return op.plan->backward_data(c.in_data<float>(0), c.in_data<float>(1), c.out_data<float>(0), workspace());
}

Status conv2d_grad_weight(const KernelCall& c) {
  const ConvOp& op = *static_cast<const ConvOp*>(c.state);
  if (numel(c.out(0)) == 0) return Status::ok();  // no channel wanted
  if (full_weight_bytes(*c.desc) == 0) {
    return op.plan->backward_filter(c.in_data<float>(0), c.in_data<float>(1), c.out_data<float>(0), workspace());
  }
  float* full = reinterpret_cast<float*>(static_cast<char*>(workspace()) + conv_scratch_offset(*op.plan));
  POCK_RETURN_IF_ERROR(op.plan->backward_filter(c.in_data<float>(0), c.in_data<float>(1), full, workspace()));
  // Output channels lead the filter layout, so the wanted ones are its first nbytes.
  return launched(c, cudaMemcpyAsync(c.out(0).data, full, c.out(0).nbytes, cudaMemcpyDeviceToDevice, current_stream()));
}

// Conv2dGradBias(dy [N, O, ...]) -> db [channels <= O].
Status conv2d_grad_bias(const KernelCall& c) {
  const pock_tensor_desc& dy = c.in(0);
  const int64_t batch = dy.dims[0], out_channels = dy.dims[1];
  const int64_t area = batch > 0 && out_channels > 0 ? numel(dy) / (batch * out_channels) : 0;
  const ConvBiasGradChannel channel{c.in_data<float>(0), c.out_data<float>(0), ChannelView{batch, out_channels, area}};
  return launched(c, launch_rows(c.out(0).dims[0], batch * area, current_stream(), channel));
}

// MaxPool2dGrad(dy, x) -> dx: thread per window.
struct MaxPoolGradElement {
  const float* dy;
  const float* x;
  float* dx;
  Window g;
  __device__ void operator()(int64_t o) const { atomicAdd(dx + max_pool_pick(g, x, o), dy[o]); }
};

Status max_pool2d_grad(const KernelCall& c, const params::WindowParams& p) {
  const Window g = ref::window_of(p, c.in(1), c.in(0), p.kernel_h, p.kernel_w);
  POCK_RETURN_IF_ERROR(launched(c, cudaMemsetAsync(c.out(0).data, 0, c.out(0).nbytes, current_stream())));
  const MaxPoolGradElement element{c.in_data<float>(0), c.in_data<float>(1), c.out_data<float>(0), g};
  return launched(c, launch_map(numel(c.in(0)), current_stream(), element));
}

// AvgPool2dGrad(dy) -> dx.
Status avg_pool2d_grad(const KernelCall& c, const params::WindowParams& p) {
  const Window g = ref::window_of(p, c.out(0), c.in(0), p.kernel_h, p.kernel_w);
  const AvgPoolGradElement element{c.in_data<float>(0), c.out_data<float>(0), g, p.count_include_pad};
  return launched(c, launch_map(numel(c.out(0)), current_stream(), element));
}

}  // namespace

void register_layer_grad_conv(KernelTable& t) {
  t.add(cudnn_conv_kernel<ConvDirection::kBackwardData, grad_input_shapes, no_extra_scratch>("Conv2dGradInput",
                                                                                             conv2d_grad_input));
  t.add(cudnn_conv_kernel<ConvDirection::kBackwardFilter, grad_weight_shapes, full_weight_bytes>("Conv2dGradWeight",
                                                                                                 conv2d_grad_weight));
  t.add({"Conv2dGradBias", DType::kF32, conv2d_grad_bias});
  t.add(typed_kernel<params::WindowParams, max_pool2d_grad>("MaxPool2dGrad", DType::kF32));
  t.add(typed_kernel<params::WindowParams, avg_pool2d_grad>("AvgPool2dGrad", DType::kF32));
}

}  // namespace pock::cuda
