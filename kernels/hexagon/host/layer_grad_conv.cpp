// The layer_grad_conv family on the DSP: the input and weight gradients of a pointwise Conv2d
// (what conv.cpp runs forward) and the bias gradient of any NCHW Conv2d. The weight and bias
// gradients may cover only the leading output channels (a partial-channel update).
#include "conv.hpp"

namespace pock::hexagon {
namespace {

void set_dims(Encoding* e, std::initializer_list<int64_t> dims) {
  int i = 0;
  for (int64_t d : dims) e->record.dim[i++] = static_cast<uint32_t>(d);
}

// (dy [N, O, H, W], w [O, C, 1, 1]) -> dx [N, C, H, W]
bool encode_grad_input(const pock_op_desc& op, Encoding* e) {
  if (!arity(op, 2, 2, 1)) return false;
  const pock_tensor_desc &dy = op.inputs[0], &w = op.inputs[1], &dx = op.outputs[0];
  params::WindowParams p;
  if (dy.rank != 4 || dx.rank != 4 || !is_pointwise_weight(w) || !pointwise_window(op, &p)) return false;
  const int64_t n = dy.dims[0], o = dy.dims[1], c = w.dims[1];
  if (w.dims[0] != o || dx.dims[0] != n || dx.dims[1] != c || dx.dims[2] != dy.dims[2] || dx.dims[3] != dy.dims[3]) return false;
  if (!fits_u32(numel(dy)) || !fits_u32(numel(dx)) || !fits_u32(o * c)) return false;
  e->record.opcode = HX_OP_POINTWISE_CONV_INPUT_GRAD;
  set_dims(e, {n, c, o, dy.dims[2] * dy.dims[3]});
  from_input(e, 0, 0);
  from_input(e, 1, 1);
  from_output(e, 3, 0);
  return true;
}

// (x [N, C, H, W], dy [N, O, H, W]) -> dw [R, C, 1, 1], R <= O leading channels
bool encode_grad_weight(const pock_op_desc& op, Encoding* e) {
  if (!arity(op, 2, 2, 1)) return false;
  const pock_tensor_desc &x = op.inputs[0], &dy = op.inputs[1], &dw = op.outputs[0];
  params::WindowParams p;
  if (x.rank != 4 || dy.rank != 4 || !is_pointwise_weight(dw) || !pointwise_window(op, &p)) return false;
  const int64_t n = x.dims[0], c = x.dims[1], o = dy.dims[1], rows = dw.dims[0];
  if (dy.dims[0] != n || dy.dims[2] != x.dims[2] || dy.dims[3] != x.dims[3] || dw.dims[1] != c || rows > o) return false;
  if (!fits_u32(numel(x)) || !fits_u32(numel(dy)) || !fits_u32(numel(dw))) return false;
  e->record.opcode = HX_OP_POINTWISE_CONV_WEIGHT_GRAD;
  set_dims(e, {n, c, o, x.dims[2] * x.dims[3], rows});
  from_input(e, 0, 0);
  from_input(e, 1, 1);
  from_output(e, 3, 0);
  return true;
}

// (dy [N, O, ...]) -> db [R], R <= O leading channels
bool encode_grad_bias(const pock_op_desc& op, Encoding* e) {
  if (!arity(op, 1, 1, 1)) return false;
  const pock_tensor_desc &dy = op.inputs[0], &db = op.outputs[0];
  params::WindowParams p;  // channels-first only: the DSP sums planes
  if (!params::parse(op, &p).is_ok() || p.nhwc) return false;
  if (dy.rank < 2 || db.rank != 1 || dy.dims[0] == 0 || dy.dims[1] == 0) return false;
  const int64_t n = dy.dims[0], o = dy.dims[1], rows = db.dims[0];
  if (rows > o || !fits_u32(numel(dy))) return false;
  e->record.opcode = HX_OP_CHANNEL_SUM;
  set_dims(e, {n, o, numel(dy) / (n * o), rows});
  from_input(e, 0, 0);
  from_output(e, 3, 0);
  return true;
}

}  // namespace

const OpEncoder kLayerGradConvEncoders[] = {
    {"Conv2dGradInput", encode_grad_input},
    {"Conv2dGradWeight", encode_grad_weight},
    {"Conv2dGradBias", encode_grad_bias},
    {nullptr, nullptr},
};

}  // namespace pock::hexagon
