// The elementwise family on the DSP: Relu, Relu6, Gelu (erf and tanh forms), Silu, and Add/Mul
// where one operand has the output's shape and the other either the same shape, a suffix of it
// (a bias repeated over rows) or a single element.
#include "encoding.hpp"
#include "kernels/params/elementwise.hpp"

namespace pock::hexagon {
namespace {

bool unary(const pock_op_desc& op, uint32_t kind, Encoding* e) {
  if (!arity(op, 1, 1, 1)) return false;
  const int64_t n = numel(op.outputs[0]);
  if (numel(op.inputs[0]) != n || !fits_u32(n)) return false;
  e->record.opcode = HX_OP_UNARY;
  e->record.dim[0] = static_cast<uint32_t>(n);
  e->record.dim[1] = kind;
  from_input(e, 0, 0);
  from_output(e, 3, 0);
  return true;
}

bool encode_relu(const pock_op_desc& op, Encoding* e) { return unary(op, HX_UNARY_RELU, e); }
bool encode_relu6(const pock_op_desc& op, Encoding* e) { return unary(op, HX_UNARY_RELU6, e); }
bool encode_silu(const pock_op_desc& op, Encoding* e) { return unary(op, HX_UNARY_SILU, e); }
bool encode_gelu(const pock_op_desc& op, Encoding* e) {
  params::ActivationParams p;
  if (!params::parse(op, &p).is_ok()) return false;
  return unary(op, p.tanh_gelu ? HX_UNARY_GELU_TANH : HX_UNARY_GELU, e);
}

bool same_shape(const pock_tensor_desc& a, const pock_tensor_desc& b) {
  if (a.rank != b.rank) return false;
  for (int i = 0; i < a.rank; ++i) {
    if (a.dims[i] != b.dims[i]) return false;
  }
  return true;
}

// `small`, its leading 1s dropped, equals the trailing dims of `full`.
bool is_suffix(const pock_tensor_desc& small, const pock_tensor_desc& full) {
  int lead = 0;
  while (lead < small.rank && small.dims[lead] == 1) ++lead;
  const int rank = small.rank - lead;
  if (rank > full.rank) return false;
  for (int i = 0; i < rank; ++i) {
    if (small.dims[lead + i] != full.dims[full.rank - rank + i]) return false;
  }
  return true;
}

bool binary(const pock_op_desc& op, uint32_t kind, Encoding* e) {
  if (!arity(op, 2, 2, 1)) return false;
  const pock_tensor_desc& y = op.outputs[0];
  // `full` is the operand with the output's shape; the other repeats over its rows.
  int full = same_shape(op.inputs[0], y) ? 0 : same_shape(op.inputs[1], y) ? 1 : -1;
  if (full < 0) return false;
  const pock_tensor_desc& other = op.inputs[1 - full];
  const int64_t count = numel(y), nb = numel(other);
  if (!(nb == 1 || is_suffix(other, y)) || !fits_u32(count)) return false;
  e->record.opcode = HX_OP_BINARY;
  e->record.dim[0] = static_cast<uint32_t>(count);
  e->record.dim[1] = kind;
  e->record.dim[2] = static_cast<uint32_t>(nb);
  e->record.dim[3] = static_cast<uint32_t>(nb == 0 ? 0 : count / nb);
  from_input(e, 0, full);  // Add and Mul commute: the full operand goes first
  from_input(e, 1, 1 - full);
  from_output(e, 3, 0);
  return true;
}

bool encode_add(const pock_op_desc& op, Encoding* e) { return binary(op, HX_BINARY_ADD, e); }
bool encode_mul(const pock_op_desc& op, Encoding* e) { return binary(op, HX_BINARY_MUL, e); }

}  // namespace

const OpEncoder kElementwiseEncoders[] = {
    {"Relu", encode_relu}, {"Relu6", encode_relu6}, {"Gelu", encode_gelu}, {"Silu", encode_silu},
    {"Add", encode_add},   {"Mul", encode_mul},     {nullptr, nullptr},
};

}  // namespace pock::hexagon
