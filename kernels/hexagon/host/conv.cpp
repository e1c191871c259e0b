// The conv family on the DSP: pointwise Conv2d — a 1x1 kernel, stride 1, no padding, one group,
// NCHW — with its fused Relu/Relu6 epilogue. Other convolutions stay on the CPU backends.
#include "conv.hpp"

#include "kernels/params/conv.hpp"

namespace pock::hexagon {

bool pointwise_window(const pock_op_desc& op, params::WindowParams* p) {
  if (!params::parse(op, p).is_ok()) return false;
  // compute "bf16" is left to the backends that round (ref, cpu).
  return !p->nhwc && !p->bf16 && p->groups == 1 && p->stride_h == 1 && p->stride_w == 1 && p->pad_top == 0 &&
         p->pad_left == 0 && p->pad_bottom == 0 && p->pad_right == 0;
}

bool is_pointwise_weight(const pock_tensor_desc& w) { return w.rank == 4 && w.dims[2] == 1 && w.dims[3] == 1; }

namespace {

// (x [N, C, H, W], w [O, C, 1, 1], bias [O]?) -> y [N, O, H, W]
bool encode_conv2d(const pock_op_desc& op, Encoding* e) {
  if (!arity(op, 2, 3, 1)) return false;
  const pock_tensor_desc &x = op.inputs[0], &w = op.inputs[1], &y = op.outputs[0];
  params::WindowParams p;
  if (x.rank != 4 || y.rank != 4 || !is_pointwise_weight(w) || !pointwise_window(op, &p)) return false;
  const int64_t n = x.dims[0], c = x.dims[1], o = w.dims[0], pixels = x.dims[2] * x.dims[3];
  if (w.dims[1] != c || y.dims[0] != n || y.dims[1] != o || y.dims[2] != x.dims[2] || y.dims[3] != x.dims[3]) return false;
  if (has_input(op, 2) && numel(op.inputs[2]) != o) return false;
  if (!fits_u32(numel(x)) || !fits_u32(numel(y)) || !fits_u32(o * c)) return false;
  hx_op& r = e->record;
  r.opcode = HX_OP_POINTWISE_CONV;
  r.flags = activation_flags(p.activation);
  r.dim[0] = static_cast<uint32_t>(n);
  r.dim[1] = static_cast<uint32_t>(c);
  r.dim[2] = static_cast<uint32_t>(o);
  r.dim[3] = static_cast<uint32_t>(pixels);
  from_input(e, 0, 0);
  from_input(e, 1, 1);
  if (has_input(op, 2)) from_input(e, 2, 2);
  from_output(e, 3, 0);
  return true;
}

}  // namespace

const OpEncoder kConvEncoders[] = {
    {"Conv2d", encode_conv2d},
    {nullptr, nullptr},
};

}  // namespace pock::hexagon
