#include "kernels/cpu/conv_grad_geometry.hpp"

#include <algorithm>

#include "kernels/cpu/cpu_util.hpp"

namespace pock::cpu {
namespace {

int64_t list_value(const KernelCall& c, const char* name, int64_t i, int64_t fallback) {
  const IntSpan list = c.attr_ints(name);
  return i < list.size ? list[i] : fallback;
}

// Smallest integer >= a / b for b > 0 (C++ division truncates toward zero).
int64_t ceil_div(int64_t a, int64_t b) { return a >= 0 ? (a + b - 1) / b : -((-a) / b); }

// The forward output extent of one axis, as the Conv2d schema computes it.
int64_t forward_extent(int64_t input, int64_t pad_begin, int64_t pad_end, int64_t kernel, int64_t stride,
                       int64_t dilation) {
  const int64_t span = dilation * (kernel - 1) + 1;
  const int64_t padded = input + pad_begin + pad_end;
  return padded < span ? -1 : (padded - span) / stride + 1;
}

// Fills g from x [N, C, H, W], dy [N, O, OH, OW] and the kernel extent; checks that they agree.
bool fill(const pock_op_desc& op, const pock_tensor_desc& x, const pock_tensor_desc& dy, int64_t weight_in_channels,
          int64_t kernel_h, int64_t kernel_w, ConvGeometry* g) {
  if (x.rank != 4 || dy.rank != 4 || !is_f32(x) || !is_f32(dy)) return false;
  const KernelCall c = call_of(op);
  g->batch = x.dims[0];
  g->in_channels = x.dims[1];
  g->in_h = x.dims[2];
  g->in_w = x.dims[3];
  g->out_channels = dy.dims[1];
  g->out_h = dy.dims[2];
  g->out_w = dy.dims[3];
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
  g->has_bias = false;
  if (g->groups < 1 || g->in_channels % g->groups != 0 || g->out_channels % g->groups != 0) return false;
  if (weight_in_channels != g->in_per_group() || kernel_h < 1 || kernel_w < 1) return false;
  if (g->stride_h < 1 || g->stride_w < 1 || g->dilation_h < 1 || g->dilation_w < 1) return false;
  if (g->pad_top < 0 || g->pad_left < 0 || g->pad_bottom < 0 || g->pad_right < 0) return false;
  if (dy.dims[0] != g->batch) return false;
  return g->out_h == forward_extent(g->in_h, g->pad_top, g->pad_bottom, kernel_h, g->stride_h, g->dilation_h) &&
         g->out_w == forward_extent(g->in_w, g->pad_left, g->pad_right, kernel_w, g->stride_w, g->dilation_w);
}

}  // namespace

bool conv_grad_input_geometry(const pock_op_desc& op, ConvGeometry* g) {
  if (op.num_inputs != 2 || op.num_outputs != 1) return false;
  const pock_tensor_desc &dy = op.inputs[0], &w = op.inputs[1], &dx = op.outputs[0];
  if (w.rank != 4 || !is_f32(w)) return false;
  if (!fill(op, dx, dy, w.dims[1], w.dims[2], w.dims[3], g)) return false;
  return w.dims[0] == g->out_channels;
}

bool conv_grad_weight_geometry(const pock_op_desc& op, ConvGeometry* g, int64_t* channels) {
  if (op.num_inputs != 2 || op.num_outputs != 1) return false;
  const pock_tensor_desc &x = op.inputs[0], &dy = op.inputs[1], &dw = op.outputs[0];
  if (dw.rank != 4 || !is_f32(dw)) return false;
  if (!fill(op, x, dy, dw.dims[1], dw.dims[2], dw.dims[3], g)) return false;
  *channels = dw.dims[0];
  return *channels >= 1 && *channels <= g->out_channels;
}

TapColumns tap_columns(const ConvGeometry& g, int64_t kx) {
  TapColumns t;
  t.shift = kx * g.dilation_w - g.pad_left;
  t.begin = std::max<int64_t>(0, ceil_div(-t.shift, g.stride_w));
  t.end = std::max(t.begin, std::min<int64_t>(g.out_w, ceil_div(g.in_w - t.shift, g.stride_w)));
  return t;
}

}  // namespace pock::cpu
