// The elementwise_grad family on the DSP: LinearInputGrad, LinearWeightGrad, the bias gradient
// (SumToShape of [..., n] to [n]) and the activation gradients ReluGrad, Relu6Grad, GeluGrad,
// SiluGrad.
#include "encoding.hpp"
#include "kernels/params/elementwise.hpp"
#include "kernels/params/linalg.hpp"

namespace pock::hexagon {
namespace {

void set_dims(Encoding* e, int64_t a, int64_t b, int64_t c) {
  e->record.dim[0] = static_cast<uint32_t>(a);
  e->record.dim[1] = static_cast<uint32_t>(b);
  e->record.dim[2] = static_cast<uint32_t>(c);
}

// (dy [..., n], w [n, k]) -> dx [..., k]
bool encode_linear_input_grad(const pock_op_desc& op, Encoding* e) {
  if (!arity(op, 2, 2, 1) || !params::is_f32_gemm(op)) return false;  // bf16 operands: ref rounds them
  const pock_tensor_desc &dy = op.inputs[0], &w = op.inputs[1];
  if (dy.rank < 1 || w.rank != 2 || last_dim(dy) != w.dims[0]) return false;
  const int64_t rows = leading_rows(dy), n = w.dims[0], k = w.dims[1];
  if (numel(op.outputs[0]) != rows * k || !fits_u32(rows * n) || !fits_u32(rows * k) || !fits_u32(n * k)) return false;
  e->record.opcode = HX_OP_LINEAR_INPUT_GRAD;
  set_dims(e, rows, n, k);
  from_input(e, 0, 0);
  from_input(e, 1, 1);
  from_output(e, 3, 0);
  return true;
}

// (dy [..., n], x [..., k]) -> dw [n, k]
bool encode_linear_weight_grad(const pock_op_desc& op, Encoding* e) {
  if (!arity(op, 2, 2, 1) || !params::is_f32_gemm(op)) return false;
  const pock_tensor_desc &dy = op.inputs[0], &x = op.inputs[1];
  if (dy.rank < 1 || x.rank < 1) return false;
  const int64_t rows = leading_rows(dy), n = last_dim(dy), k = last_dim(x);
  if (leading_rows(x) != rows || numel(op.outputs[0]) != n * k) return false;
  if (!fits_u32(rows * n) || !fits_u32(rows * k) || !fits_u32(n * k)) return false;
  e->record.opcode = HX_OP_LINEAR_WEIGHT_GRAD;
  set_dims(e, rows, n, k);
  from_input(e, 0, 0);
  from_input(e, 1, 1);
  from_output(e, 3, 0);
  return true;
}

// (dy f32 [..., n], w_t i8 [k, n], scale f32 [n]) -> dx [..., k]
bool encode_linear_int8_input_grad(const pock_op_desc& op, Encoding* e) {
  if (!arity(op, 3, 3, 1, /*non_f32=*/1u << 1) || op.inputs[1].dtype != POCK_I8) return false;
  const pock_tensor_desc &dy = op.inputs[0], &wt = op.inputs[1];
  if (dy.rank < 1 || wt.rank != 2 || last_dim(dy) != wt.dims[1] || numel(op.inputs[2]) != wt.dims[1]) return false;
  const int64_t rows = leading_rows(dy), n = wt.dims[1], k = wt.dims[0];
  if (n > HX_MAX_INT8_ROW || numel(op.outputs[0]) != rows * k) return false;
  if (!fits_u32(rows * n) || !fits_u32(rows * k) || !fits_u32(n * k)) return false;
  e->record.opcode = HX_OP_LINEAR_INT8_INPUT_GRAD;
  set_dims(e, rows, n, k);
  from_input(e, 0, 0);
  from_input(e, 1, 1);
  from_input(e, 2, 2);
  from_output(e, 3, 0);
  return true;
}

// SumToShape where the target, its leading 1s dropped, is the input's trailing dims: a sum over
// rows (a bias gradient), or a copy when the shapes are equal.
bool encode_sum_to_shape(const pock_op_desc& op, Encoding* e) {
  if (!arity(op, 1, 1, 1)) return false;
  const pock_tensor_desc &x = op.inputs[0], &y = op.outputs[0];
  int lead = 0;
  while (lead < y.rank && y.dims[lead] == 1) ++lead;
  const int rank = y.rank - lead;
  if (rank > x.rank) return false;
  for (int i = 0; i < rank; ++i) {
    if (y.dims[lead + i] != x.dims[x.rank - rank + i]) return false;
  }
  const int64_t n = numel(y);
  if (n == 0 || !fits_u32(numel(x))) return false;
  e->record.opcode = HX_OP_SUM_ROWS;
  e->record.dim[0] = static_cast<uint32_t>(numel(x) / n);
  e->record.dim[1] = static_cast<uint32_t>(n);
  from_input(e, 0, 0);
  from_output(e, 3, 0);
  return true;
}

bool unary_grad(const pock_op_desc& op, uint32_t kind, Encoding* e) {
  if (!arity(op, 2, 2, 1)) return false;
  const int64_t n = numel(op.outputs[0]);
  if (numel(op.inputs[0]) != n || numel(op.inputs[1]) != n || !fits_u32(n)) return false;
  e->record.opcode = HX_OP_UNARY_GRAD;
  e->record.dim[0] = static_cast<uint32_t>(n);
  e->record.dim[1] = kind;
  from_input(e, 0, 0);
  from_input(e, 1, 1);
  from_output(e, 3, 0);
  return true;
}

bool encode_relu_grad(const pock_op_desc& op, Encoding* e) { return unary_grad(op, HX_UNARY_RELU, e); }
bool encode_relu6_grad(const pock_op_desc& op, Encoding* e) { return unary_grad(op, HX_UNARY_RELU6, e); }
bool encode_silu_grad(const pock_op_desc& op, Encoding* e) { return unary_grad(op, HX_UNARY_SILU, e); }
bool encode_gelu_grad(const pock_op_desc& op, Encoding* e) {
  params::ActivationParams p;
  if (!params::parse(op, &p).is_ok()) return false;
  return unary_grad(op, p.tanh_gelu ? HX_UNARY_GELU_TANH : HX_UNARY_GELU, e);
}

}  // namespace

const OpEncoder kElementwiseGradEncoders[] = {
    {"LinearInputGrad", encode_linear_input_grad},
    {"LinearWeightGrad", encode_linear_weight_grad},
    {"LinearInt8InputGrad", encode_linear_int8_input_grad},
    {"SumToShape", encode_sum_to_shape},
    {"ReluGrad", encode_relu_grad},
    {"Relu6Grad", encode_relu6_grad},
    {"GeluGrad", encode_gelu_grad},
    {"SiluGrad", encode_silu_grad},
    {nullptr, nullptr},
};

}  // namespace pock::hexagon
