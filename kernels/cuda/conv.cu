// The CUDA conv family: Conv2d through cuDNN (conv_plan.hpp; grouped and depthwise included, NCHW;
// what cuDNN cannot compute as ref does is declined), then bias and the fused activation in one
// element-wise pass; MaxPool2d and AvgPool2d a thread per output, GlobalAvgPool a warp or block
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

// Conv2d(x, w, b?) -> y.
ConvShapes forward_shapes(const pock_op_desc& op) {
  const pock_tensor_desc& w = op.inputs[1];
  return conv_shapes(op.inputs[0], w.dims[0], w.dims[2], w.dims[3], op.outputs[0]);
}

Status conv2d(const KernelCall& c) {
  const ConvOp& op = *static_cast<const ConvOp*>(c.state);
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
  t.add(cudnn_conv_kernel<ConvDirection::kForward, forward_shapes, no_extra_scratch>("Conv2d", conv2d));
  t.add(typed_kernel<params::WindowParams, max_pool2d>("MaxPool2d", DType::kF32));
  t.add(typed_kernel<params::WindowParams, avg_pool2d>("AvgPool2d", DType::kF32));
  t.add({"GlobalAvgPool", DType::kF32, global_avg_pool});
}

}  // namespace pock::cuda
