// The CUDA conv family: Conv2d through cuDNN (conv_plan.hpp; grouped and depthwise included; NHWC
// and padding cuDNN cannot express through a zero-padded NCHW copy of x in the workspace), then
// bias and the fused activation in one element-wise pass; MaxPool2d and AvgPool2d a thread per
// output, GlobalAvgPool a warp or block per plane. The element logic is conv_logic.hpp's, checked against ref on the host by
// tests/cuda_logic/test_conv_logic.cpp.
#include "kernels/cuda/conv_logic.hpp"
#include "kernels/cuda/conv_op.hpp"
#include "kernels/cuda/cuda_families.hpp"
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/kernel_launch.cuh"
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

// The NCHW (padded) copy of x for NHWC or padding cuDNN cannot express, and for NHWC cuDNN's
// NCHW result.
struct ForwardPieces {
  float* x = nullptr;
  float* y = nullptr;
};

ForwardPieces forward_pieces(const ConvOp& op, ScratchLayout& layout) {
  ForwardPieces p;
  const ConvShapes& g = op.geometry.shapes;
  if (op.params.nhwc || op.geometry.padded) p.x = layout.take<float>(g.n * g.c * g.h * g.w);
  if (op.params.nhwc) p.y = layout.take<float>(g.n * g.o * g.oh * g.ow);
  return p;
}

void forward_scratch(const pock_op_desc&, const ConvOp& op, ScratchLayout& layout) { forward_pieces(op, layout); }

Status conv2d(const KernelCall& c) {
  const ConvOp& op = *static_cast<const ConvOp*>(c.state);
  ScratchLayout layout = conv_scratch(op, workspace());
  const ForwardPieces pieces = forward_pieces(op, layout);
  const bool nhwc = op.params.nhwc, bias = c.has_input(2);
  const float* x = c.in_data<float>(0);
  if (pieces.x) {
    const ConvShapes& g = op.geometry.shapes;
    const bool pad = op.geometry.padded;
    const ImageToPaddedNchw copy{x,   pieces.x, extents(c.in(0), nhwc), nhwc, pad ? op.params.pad_top : 0,
                                 pad ? op.params.pad_left : 0, g.h, g.w};
    POCK_RETURN_IF_ERROR(launched(c, launch_map(g.n * g.c * g.h * g.w, current_stream(), copy)));
    x = pieces.x;
  }
  float* y = nhwc ? pieces.y : c.out_data<float>(0);
  POCK_RETURN_IF_ERROR(op.plan->forward(x, c.in_data<float>(1), y, workspace()));
  const pock_tensor_desc& out = c.out(0);
  if (nhwc) {
    const NhwcEpilogue epilogue{y, bias ? c.in_data<float>(2) : nullptr, c.out_data<float>(0), extents(out, true),
                                op.params.activation};
    return launched(c, launch_map(numel(out), current_stream(), epilogue));
  }
  if (!bias && op.params.activation == Activation::kNone) return Status::ok();
  const ConvEpilogue epilogue{y, bias ? c.in_data<float>(2) : nullptr, out.dims[1], out.dims[2] * out.dims[3],
                              op.params.activation};
  return launched(c, launch_map(numel(out), current_stream(), epilogue));
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
  t.add(cudnn_conv_kernel<ConvDirection::kForward, forward_shapes, forward_scratch>("Conv2d", conv2d));
  t.add(typed_kernel<params::WindowParams, max_pool2d>("MaxPool2d", DType::kF32));
  t.add(typed_kernel<params::WindowParams, avg_pool2d>("AvgPool2d", DType::kF32));
  t.add({"GlobalAvgPool", DType::kF32, global_avg_pool});
}

}  // namespace pock::cuda
