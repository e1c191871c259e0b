// The glue between a bound convolution op and its cuDNN plan (conv_plan.hpp), shared by Conv2d
// (conv.cu) and its gradients (layer_grad_conv.cu): each op says where its x, w and y extents
// are and how much scratch it needs besides cuDNN's; prepare parses the parameters, makes the
// plan and reserves the workspace; accepts declines what cuDNN would not compute as ref does.
#pragma once
#include <memory>
#include <new>

#include "kernels/cuda/conv_plan.hpp"
#include "kernels/cuda/stream.hpp"
#include "runtime/kernel.hpp"

namespace pock::cuda {

struct ConvOp {
  params::WindowParams params;
  std::unique_ptr<ConvPlan> plan;
};

// Where cuDNN's workspace ends and the op's own scratch begins.
inline size_t conv_scratch_offset(const ConvPlan& plan) { return (plan.workspace_bytes() + 255) / 256 * 256; }

// The extents of x [n, c, h, w], the filter (o, kh, kw) and y [.., .., oh, ow], NCHW.
inline ConvShapes conv_shapes(const pock_tensor_desc& x, int64_t o, int64_t kh, int64_t kw, const pock_tensor_desc& y) {
  return {x.dims[0], x.dims[1], x.dims[2], x.dims[3], o, kh, kw, y.dims[2], y.dims[3]};
}

inline size_t no_extra_scratch(const pock_op_desc&) { return 0; }

template <ConvShapes (*kShapes)(const pock_op_desc&)>
bool accepts_conv(const pock_op_desc& op) {
  params::WindowParams p;
  if (!parse(op, &p).is_ok()) return false;
  return cudnn_conv_fits(kShapes(op), p);
}

template <ConvDirection kDirection, ConvShapes (*kShapes)(const pock_op_desc&), size_t (*kExtra)(const pock_op_desc&)>
Status prepare_conv(const pock_op_desc& op, void** state) {
  std::unique_ptr<ConvOp> conv(new (std::nothrow) ConvOp);
  if (!conv) return Status(Code::kOutOfMemory, std::string(op.op) + " '" + op.name + "': plan");
  POCK_RETURN_IF_ERROR(parse(op, &conv->params));
  POCK_RETURN_IF_ERROR(ConvPlan::create(kDirection, kShapes(op), conv->params, &conv->plan));
  POCK_RETURN_IF_ERROR(reserve_workspace(conv_scratch_offset(*conv->plan) + kExtra(op)));
  *state = conv.release();
  return Status::ok();
}

inline void release_conv(void* state) { delete static_cast<ConvOp*>(state); }

template <ConvDirection kDirection, ConvShapes (*kShapes)(const pock_op_desc&), size_t (*kExtra)(const pock_op_desc&)>
KernelDef cudnn_conv_kernel(const char* op, KernelFn run) {
  KernelDef d;
  d.op = op;
  d.dtype = DType::kF32;
  d.run = run;
  d.prepare = prepare_conv<kDirection, kShapes, kExtra>;
  d.release = release_conv;
  d.accepts = accepts_conv<kShapes>;
  return d;
}

}  // namespace pock::cuda
