// The CUDA conv backward ops: Conv2dGradInput and Conv2dGradWeight through cuDNN (conv_plan.hpp;
// padding cuDNN cannot express through zero-padded copies of x and dx in the workspace); a weight
// gradient for only the first output channels (dw's leading extent below dy's channels) is
// computed in full into the workspace and its leading part copied out. Conv2dGradBias a team
// per channel; AvgPool2dGrad and MaxPool2dGrad a thread per input element gathering from the
// windows that cover it (deterministic; MaxPool2dGrad bit for bit ref's scatter). Logic in
// conv_logic.hpp, checked on the host by tests/cuda_logic/test_conv_logic.cpp.
#include "kernels/cuda/conv_logic.hpp"
#include "kernels/cuda/conv_op.hpp"
#include "kernels/cuda/cuda_families.hpp"
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/kernel_launch.cuh"
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

// Conv2dGradInput through a padded copy: the padded dx, whose interior is dx.
float* grad_input_piece(const ConvOp& op, ScratchLayout& layout) {
  const ConvShapes& g = op.geometry.shapes;
  return op.geometry.padded ? layout.take<float>(g.n * g.c * g.h * g.w) : nullptr;
}

void grad_input_scratch(const pock_op_desc&, const ConvOp& op, ScratchLayout& layout) { grad_input_piece(op, layout); }

Status conv2d_grad_input(const KernelCall& c) {
  const ConvOp& op = *static_cast<const ConvOp*>(c.state);
  ScratchLayout layout = conv_scratch(op, workspace());
  float* padded = grad_input_piece(op, layout);
  if (!padded) return op.plan->backward_data(c.in_data<float>(0), c.in_data<float>(1), c.out_data<float>(0), workspace());
  POCK_RETURN_IF_ERROR(op.plan->backward_data(c.in_data<float>(0), c.in_data<float>(1), padded, workspace()));
  const ConvShapes& s = op.shapes;
  const CropPadded crop{padded, c.out_data<float>(0), {s.n, s.c, s.h, s.w}, op.params.pad_top, op.params.pad_left,
                        op.geometry.shapes.h, op.geometry.shapes.w};
  return launched(c, launch_map(numel(c.out(0)), current_stream(), crop));
}

// Conv2dGradWeight's pieces: x's padded copy (padding cuDNN cannot express), and the full weight
// gradient when dw keeps only the leading output channels.
struct WeightPieces {
  float* x = nullptr;
  float* full = nullptr;
};

WeightPieces grad_weight_pieces(const pock_op_desc& desc, const ConvOp& op, ScratchLayout& layout) {
  WeightPieces p;
  const ConvShapes& g = op.geometry.shapes;
  if (op.geometry.padded) p.x = layout.take<float>(g.n * g.c * g.h * g.w);
  const pock_tensor_desc& dw = desc.outputs[0];
  if (dw.dims[0] != g.o && dw.dims[0] > 0) p.full = layout.take<float>(numel(dw) / dw.dims[0] * g.o);
  return p;
}

void grad_weight_scratch(const pock_op_desc& desc, const ConvOp& op, ScratchLayout& layout) {
  grad_weight_pieces(desc, op, layout);
}

Status conv2d_grad_weight(const KernelCall& c) {
  const ConvOp& op = *static_cast<const ConvOp*>(c.state);
  if (numel(c.out(0)) == 0) return Status::ok();  // no channel wanted
  ScratchLayout layout = conv_scratch(op, workspace());
  const WeightPieces pieces = grad_weight_pieces(*c.desc, op, layout);
  const float* x = c.in_data<float>(0);
  if (pieces.x) {
    const ConvShapes& s = op.shapes;
    const ConvShapes& g = op.geometry.shapes;
    const ImageToPaddedNchw copy{x, pieces.x, {s.n, s.c, s.h, s.w}, false, op.params.pad_top, op.params.pad_left, g.h, g.w};
    POCK_RETURN_IF_ERROR(launched(c, launch_map(g.n * g.c * g.h * g.w, current_stream(), copy)));
    x = pieces.x;
  }
  float* dw = pieces.full ? pieces.full : c.out_data<float>(0);
  POCK_RETURN_IF_ERROR(op.plan->backward_filter(x, c.in_data<float>(1), dw, workspace()));
  if (!pieces.full) return Status::ok();
  // Output channels lead the filter layout, so the wanted ones are its first nbytes.
  return launched(c, cudaMemcpyAsync(c.out(0).data, dw, c.out(0).nbytes, cudaMemcpyDeviceToDevice, current_stream()));
}

// Conv2dGradBias(dy [N, O, ...]) -> db [channels <= O].
Status conv2d_grad_bias(const KernelCall& c) {
  const pock_tensor_desc& dy = c.in(0);
  const int64_t batch = dy.dims[0], out_channels = dy.dims[1];
  const int64_t area = batch > 0 && out_channels > 0 ? numel(dy) / (batch * out_channels) : 0;
  const ConvBiasGradChannel channel{c.in_data<float>(0), c.out_data<float>(0), ChannelView{batch, out_channels, area}};
  return launched(c, launch_rows(c.out(0).dims[0], batch * area, current_stream(), channel));
}

// MaxPool2dGrad(dy, x) -> dx: a thread per input element.
Status max_pool2d_grad(const KernelCall& c, const params::WindowParams& p) {
  const Window g = ref::window_of(p, c.in(1), c.in(0), p.kernel_h, p.kernel_w);
  const MaxPoolGradElement element{c.in_data<float>(0), c.in_data<float>(1), c.out_data<float>(0), g};
  return launched(c, launch_map(numel(c.out(0)), current_stream(), element));
}

// AvgPool2dGrad(dy) -> dx.
Status avg_pool2d_grad(const KernelCall& c, const params::WindowParams& p) {
  const Window g = ref::window_of(p, c.out(0), c.in(0), p.kernel_h, p.kernel_w);
  const AvgPoolGradElement element{c.in_data<float>(0), c.out_data<float>(0), g, p.count_include_pad};
  return launched(c, launch_map(numel(c.out(0)), current_stream(), element));
}

}  // namespace

void register_layer_grad_conv(KernelTable& t) {
  t.add(cudnn_conv_kernel<ConvDirection::kBackwardData, grad_input_shapes, grad_input_scratch>("Conv2dGradInput",
                                                                                             conv2d_grad_input));
  t.add(cudnn_conv_kernel<ConvDirection::kBackwardFilter, grad_weight_shapes, grad_weight_scratch>("Conv2dGradWeight",
                                                                                                 conv2d_grad_weight));
  t.add({"Conv2dGradBias", DType::kF32, conv2d_grad_bias});
  t.add(typed_kernel<params::WindowParams, max_pool2d_grad>("MaxPool2dGrad", DType::kF32));
  t.add(typed_kernel<params::WindowParams, avg_pool2d_grad>("AvgPool2dGrad", DType::kF32));
}

}  // namespace pock::cuda
