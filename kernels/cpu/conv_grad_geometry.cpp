#include "kernels/cpu/conv_grad_geometry.hpp"

#include <algorithm>

#include "kernels/cpu/cpu_util.hpp"

namespace pock::cpu {
namespace {

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
  if (!read_window(op, x, dy, kernel_h, kernel_w, g)) return false;
  g->has_bias = false;
  if (weight_in_channels != g->in_per_group()) return false;
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
  // Clamped to the row: a tap that reads only padding (a kernel wider than the padded input's
  // reach, e.g. width 5 over one pixel padded by 2) touches no column.
  t.begin = std::min<int64_t>(g.out_w, std::max<int64_t>(0, ceil_div(-t.shift, g.stride_w)));
  t.end = std::max(t.begin, std::min<int64_t>(g.out_w, ceil_div(g.in_w - t.shift, g.stride_w)));
  return t;
}

}  // namespace pock::cpu
