#include "kernels/cpu/conv_geometry.hpp"

#include "kernels/cpu/cpu_util.hpp"
#include "kernels/params/conv.hpp"

namespace pock::cpu {
bool read_window(const pock_op_desc& op, const pock_tensor_desc& x, const pock_tensor_desc& y, int64_t kernel_h,
                 int64_t kernel_w, ConvGeometry* g) {
  if (x.rank != 4 || y.rank != 4 || !is_f32(x) || !is_f32(y)) return false;
  params::WindowParams p;  // the conv family's shared parser; invalid attributes decline here
  if (!params::parse(op, &p).is_ok()) return false;
  g->batch = x.dims[0];
  g->in_channels = x.dims[1];
  g->in_h = x.dims[2];
  g->in_w = x.dims[3];
  g->out_channels = y.dims[1];
  g->out_h = y.dims[2];
  g->out_w = y.dims[3];
  g->kernel_h = kernel_h;
  g->kernel_w = kernel_w;
  g->stride_h = p.stride_h;
  g->stride_w = p.stride_w;
  g->dilation_h = p.dilation_h;
  g->dilation_w = p.dilation_w;
  g->pad_top = p.pad_top;
  g->pad_left = p.pad_left;
  g->pad_bottom = p.pad_bottom;
  g->pad_right = p.pad_right;
  g->groups = p.groups;
  g->activation = p.activation;
  g->bf16 = p.bf16;
  if (g->groups < 1 || g->in_channels % g->groups != 0 || g->out_channels % g->groups != 0) return false;
  if (kernel_h < 1 || kernel_w < 1) return false;
  if (g->stride_h < 1 || g->stride_w < 1 || g->dilation_h < 1 || g->dilation_w < 1) return false;
  if (g->pad_top < 0 || g->pad_left < 0 || g->pad_bottom < 0 || g->pad_right < 0) return false;
  return y.dims[0] == g->batch;
}

bool conv_geometry(const pock_op_desc& op, ConvGeometry* g) {
  if (op.num_inputs < 2 || op.num_outputs != 1) return false;
  const pock_tensor_desc &x = op.inputs[0], &w = op.inputs[1], &y = op.outputs[0];
  if (w.rank != 4 || !is_f32(w)) return false;
  if (!read_window(op, x, y, w.dims[2], w.dims[3], g)) return false;
  g->has_bias = op.num_inputs > 2 && is_present(op.inputs[2]);
  if (g->has_bias && (!is_f32(op.inputs[2]) || numel(op.inputs[2]) != g->out_channels)) return false;
  return w.dims[0] == g->out_channels && w.dims[1] == g->in_per_group();
}

}  // namespace pock::cpu
