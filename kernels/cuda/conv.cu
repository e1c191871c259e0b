// The CUDA conv family: Conv2d through cuDNN (conv_plan.hpp; grouped and depthwise included; NHWC
// through NCHW copies in the workspace; what cuDNN cannot compute as ref does is declined), then
// bias and the fused activation in one element-wise pass; MaxPool2d and AvgPool2d a thread per output, GlobalAvgPool a warp or block
// per plane. The element logic is conv_logic.hpp's, checked against ref on the host by
// tests/cuda_logic/test_conv_logic.cpp.
#include "kernels/cuda/conv_logic.hpp"
#include "kernels/cuda/conv_op.hpp"
#include "kernels/cuda/cuda_families.hpp"
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/launch_status.hpp"
#include "kernels/cuda/row_team.cuh"

namespace pock::cuda {
namespace {

bool is_nhwc(const pock_op_desc& op) {
  params::WindowParams p;
  return parse(op, &p).is_ok() && p.nhwc;
}

// An image's extents as NCHW, whichever layout it is stored in.
NchwExtents extents(const pock_tensor_desc& t, bool nhwc) {
  return nhwc ? NchwExtents{t.dims[0], t.dims[3], t.dims[1], t.dims[2]}
              : NchwExtents{t.dims[0], t.dims[1], t.dims[2], t.dims[3]};
}

// Conv2d(x, w, b?) -> y; w is [O, C / groups, kh, kw] in either layout.
ConvShapes forward_shapes(const pock_op_desc& op) {
  const bool nhwc = is_nhwc(op);
  const NchwExtents x = extents(op.inputs[0], nhwc), y = extents(op.outputs[0], nhwc);
  const pock_tensor_desc& w = op.inputs[1];
  return {x.n, x.c, x.h, x.w, w.dims[0], w.dims[2], w.dims[3], y.h, y.w};
}

// NHWC: the NCHW copies of x and y after cuDNN's workspace.
size_t nhwc_scratch(const pock_op_desc& op) {
  if (!is_nhwc(op)) return 0;
  return static_cast<size_t>(numel(op.inputs[0]) + numel(op.outputs[0])) * sizeof(float);
}

Status conv2d_nhwc(const KernelCall& c, const ConvOp& op) {
  float* x_nchw = reinterpret_cast<float*>(static_cast<char*>(workspace()) + conv_scratch_offset(*op.plan));
  float* y_nchw = x_nchw + numel(c.in(0));
  const NhwcToNchw to_nchw{c.in_data<float>(0), x_nchw, extents(c.in(0), true)};
  POCK_RETURN_IF_ERROR(launched(c, launch_map(numel(c.in(0)), current_stream(), to_nchw)));
  POCK_RETURN_IF_ERROR(op.plan->forward(x_nchw, c.in_data<float>(1), y_nchw, workspace()));
  const NhwcEpilogue epilogue{y_nchw, c.has_input(2) ? c.in_data<float>(2) : nullptr, c.out_data<float>(0),
                              extents(c.out(0), true), op.params.activation};
  return launched(c, launch_map(numel(c.out(0)), current_stream(), epilogue));
}

Status conv2d(const KernelCall& c) {
  const ConvOp& op = *static_cast<const ConvOp*>(c.state);
  if (op.params.nhwc) return conv2d_nhwc(c, op);
  POCK_RETURN_IF_ERROR(op.plan->forward(c.in_data<float>(0), c.in_data<float>(1), c.out_data<float>(0), workspace()));
  const bool bias = c.has_input(2);
  if (!bias && op.params.activation == Activation::kNone) return Status::ok();
  const pock_tensor_desc& y = c.out(0);
  const ConvEpilogue epilogue{c.out_data<float>(0), bias ? c.in_data<float>(2) : nullptr, y.dims[1],
                              y.dims[2] * y.dims[3], op.params.activation};
  return launched(c, launch_map(numel(y), current_stream(), epilogue));
}

Window pool_window(const KernelCall& c, const params::WindowParams& p) {
  return ref::window_of(p, c.in(0), c.out(0), p.kernel_h, p.kernel_w);
}

Status max_pool2d(const KernelCall& c, const params::WindowParams& p) {
  const MaxPoolElement element{c.in_data<float>(0), c.out_data<float>(0), pool_window(c, p)};
  return launched(c, launch_map(numel(c.out(0)), current_stream(), element));
}

Status avg_pool2d(const KernelCall& c, const params::WindowParams& p) {
  const AvgPoolElement element{c.in_data<float>(0), c.out_data<float>(0), pool_window(c, p), p.count_include_pad};
  return launched(c, launch_map(numel(c.out(0)), current_stream(), element));
}

Status global_avg_pool(const KernelCall& c) {
  const pock_tensor_desc& x = c.in(0);
  const int64_t area = x.dims[2] * x.dims[3];
  const GlobalAvgPoolPlane plane{c.in_data<float>(0), c.out_data<float>(0), area};
  return launched(c, launch_rows(x.dims[0] * x.dims[1], area, current_stream(), plane));
}

}  // namespace

void register_conv(KernelTable& t) {
  t.add(cudnn_conv_kernel<ConvDirection::kForward, forward_shapes, nhwc_scratch>("Conv2d", conv2d));
  t.add(typed_kernel<params::WindowParams, max_pool2d>("MaxPool2d", DType::kF32));
  t.add(typed_kernel<params::WindowParams, avg_pool2d>("AvgPool2d", DType::kF32));
  t.add({"GlobalAvgPool", DType::kF32, global_avg_pool});
}

}  // namespace pock::cuda
