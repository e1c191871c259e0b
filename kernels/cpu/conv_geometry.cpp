#include "kernels/cpu/conv_geometry.hpp"

#include "kernels/cpu/activation_epilogue.hpp"
#include "kernels/cpu/cpu_util.hpp"

namespace pock::cpu {
namespace {

int64_t list_value(const KernelCall& c, const char* name, int64_t i, int64_t fallback) {
  const IntSpan list = c.attr_ints(name);
  return i < list.size ? list[i] : fallback;
}

}  // namespace

bool read_window(const pock_op_desc& op, const pock_tensor_desc& x, const pock_tensor_desc& y, int64_t kernel_h,
                 int64_t kernel_w, ConvGeometry* g) {
  if (x.rank != 4 || y.rank != 4 || !is_f32(x) || !is_f32(y)) return false;
  const KernelCall c = call_of(op);
  g->batch = x.dims[0];
  g->in_channels = x.dims[1];
  g->in_h = x.dims[2];
  g->in_w = x.dims[3];
  g->out_channels = y.dims[1];
  g->out_h = y.dims[2];
  g->out_w = y.dims[3];
  g->kernel_h = kernel_h;
  g->kernel_w = kernel_w;
  g->stride_h = list_value(c, "strides", 0, 1);
  g->stride_w = list_value(c, "strides", 1, 1);
  g->dilation_h = list_value(c, "dilations", 0, 1);
  g->dilation_w = list_value(c, "dilations", 1, 1);
  g->pad_top = list_value(c, "pads", 0, 0);
  g->pad_left = list_value(c, "pads", 1, 0);
  g->pad_bottom = list_value(c, "pads", 2, 0);
  g->pad_right = list_value(c, "pads", 3, 0);
  g->groups = c.attr_int("groups", 1);
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
  const std::optional<Activation> activation = activation_of(op);
  if (!activation) return false;
  g->activation = *activation;
  if (g->has_bias && (!is_f32(op.inputs[2]) || numel(op.inputs[2]) != g->out_channels)) return false;
  return w.dims[0] == g->out_channels && w.dims[1] == g->in_per_group();
}

}  // namespace pock::cpu
