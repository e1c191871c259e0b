// The glue between a bound convolution op and its cuDNN plan (conv_plan.hpp), shared by Conv2d
// (conv.cu) and its gradients (layer_grad_conv.cu): each op says where its x, w and y extents
// are and which scratch it needs besides cuDNN's; prepare parses the parameters, settles how
// cuDNN sees the convolution (CudnnGeometry: directly, or on a zero-padded copy of x), makes the
// plan and reserves the workspace; accepts declines what cuDNN cannot compute as ref does.
#pragma once
#include <memory>
#include <new>

#include "kernels/cuda/conv_plan.hpp"
#include "kernels/cuda/scratch_layout.hpp"
#include "kernels/cuda/stream.hpp"
#include "runtime/kernel.hpp"

namespace pock::cuda {

struct ConvOp {
  params::WindowParams params;
  ConvShapes shapes;  // ref's, NCHW
  CudnnGeometry geometry;
  std::unique_ptr<ConvPlan> plan;
};

// The workspace with cuDNN's piece taken; the op takes its own pieces after it, with the same
// calls at prepare (base null: measuring) and at run.
inline ScratchLayout conv_scratch(const ConvOp& op, void* base) {
  ScratchLayout layout{static_cast<char*>(base)};
  layout.take<char>(static_cast<int64_t>(op.plan->workspace_bytes()));
  return layout;
}

// The extents of x [n, c, h, w], the filter (o, kh, kw) and y [.., .., oh, ow], NCHW.
inline ConvShapes conv_shapes(const pock_tensor_desc& x, int64_t o, int64_t kh, int64_t kw, const pock_tensor_desc& y) {
  return {x.dims[0], x.dims[1], x.dims[2], x.dims[3], o, kh, kw, y.dims[2], y.dims[3]};
}

template <ConvShapes (*kShapes)(const pock_op_desc&)>
bool accepts_conv(const pock_op_desc& op) {
  params::WindowParams p;
  CudnnGeometry g;
  // compute "bf16" (recipe precision bf16 on the cpu backend) is left to the backends that round.
  return parse(op, &p).is_ok() && !p.bf16 && cudnn_geometry(kShapes(op), p, &g);
}

// kScratch(op, layout) takes the op's pieces from `layout` (after cuDNN's workspace).
template <ConvDirection kDirection, ConvShapes (*kShapes)(const pock_op_desc&),
          void (*kScratch)(const pock_op_desc&, const ConvOp&, ScratchLayout&)>
Status prepare_conv(const pock_op_desc& op, void** state) {
  std::unique_ptr<ConvOp> conv(new (std::nothrow) ConvOp);
  if (!conv) return Status(Code::kOutOfMemory, std::string(op.op) + " '" + op.name + "': plan");
  POCK_RETURN_IF_ERROR(parse(op, &conv->params));
  conv->shapes = kShapes(op);
  if (!cudnn_geometry(conv->shapes, conv->params, &conv->geometry)) {
    return Status(Code::kInvalidArgument, std::string(op.op) + " '" + op.name + "': extents beyond cuDNN's");
  }
  POCK_RETURN_IF_ERROR(ConvPlan::create(kDirection, conv->geometry.shapes, conv->geometry.params, &conv->plan));
  ScratchLayout layout = conv_scratch(*conv, nullptr);
  kScratch(op, *conv, layout);
  POCK_RETURN_IF_ERROR(reserve_workspace(layout.bytes()));
  *state = conv.release();
  return Status::ok();
}

inline void release_conv(void* state) { delete static_cast<ConvOp*>(state); }

template <ConvDirection kDirection, ConvShapes (*kShapes)(const pock_op_desc&),
          void (*kScratch)(const pock_op_desc&, const ConvOp&, ScratchLayout&)>
KernelDef cudnn_conv_kernel(const char* op, KernelFn run) {
  KernelDef d;
  d.op = op;
  d.dtype = DType::kF32;
  d.run = run;
  d.prepare = prepare_conv<kDirection, kShapes, kScratch>;
  d.release = release_conv;
  d.accepts = accepts_conv<kShapes>;
  return d;
}

}  // namespace pock::cuda
