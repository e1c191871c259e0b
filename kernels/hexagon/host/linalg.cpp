// The linalg family on the DSP: Linear (fused Relu/Relu6 epilogue included), MatMul with
// transposes, where each operand either carries the full batch or is one matrix for all of it,
// and LinearInt8 (frozen int8 weights, int8 products on HVX).
#include "encoding.hpp"
#include "kernels/params/linalg.hpp"

namespace pock::hexagon {
namespace {

bool encode_linear(const pock_op_desc& op, Encoding* e) {
  if (!arity(op, 2, 3, 1)) return false;
  const pock_tensor_desc &x = op.inputs[0], &w = op.inputs[1], &y = op.outputs[0];
  if (x.rank < 1 || w.rank != 2 || w.dims[1] != last_dim(x)) return false;
  const int64_t k = w.dims[1], n = w.dims[0], rows = leading_rows(x);
  if (has_input(op, 2) && numel(op.inputs[2]) != n) return false;
  if (numel(y) != rows * n || !fits_u32(rows * k) || !fits_u32(rows * n) || !fits_u32(n * k)) return false;
  params::MatMulParams p;
  if (!params::parse(op, &p).is_ok() || p.bf16) return false;  // bf16 operands: ref rounds them
  hx_op& r = e->record;
  r.opcode = HX_OP_LINEAR;
  r.flags = activation_flags(p.activation);
  r.dim[0] = static_cast<uint32_t>(rows);
  r.dim[1] = static_cast<uint32_t>(k);
  r.dim[2] = static_cast<uint32_t>(n);
  from_input(e, 0, 0);
  from_input(e, 1, 1);
  if (has_input(op, 2)) from_input(e, 2, 2);
  from_output(e, 3, 0);
  return true;
}

// (x f32 [..., k], w i8 [n, k], scale f32 [n], bias f32 [n]?) -> y [..., n]
bool encode_linear_int8(const pock_op_desc& op, Encoding* e) {
  if (!arity(op, 3, 4, 1, /*non_f32=*/1u << 1) || op.inputs[1].dtype != POCK_I8) return false;
  const pock_tensor_desc &x = op.inputs[0], &w = op.inputs[1], &y = op.outputs[0];
  if (x.rank < 1 || w.rank != 2 || w.dims[1] != last_dim(x) || numel(op.inputs[2]) != w.dims[0]) return false;
  const int64_t k = w.dims[1], n = w.dims[0], rows = leading_rows(x);
  if (k > HX_MAX_INT8_ROW || (has_input(op, 3) && numel(op.inputs[3]) != n)) return false;
  if (numel(y) != rows * n || !fits_u32(rows * k) || !fits_u32(rows * n) || !fits_u32(n * k)) return false;
  hx_op& r = e->record;
  r.opcode = HX_OP_LINEAR_INT8;
  r.dim[0] = static_cast<uint32_t>(rows);
  r.dim[1] = static_cast<uint32_t>(k);
  r.dim[2] = static_cast<uint32_t>(n);
  from_input(e, 0, 0);
  from_input(e, 1, 1);
  from_input(e, 2, 2);
  if (has_input(op, 3)) from_input(e, 4, 3);
  from_output(e, 3, 0);
  return true;
}

// Product of the batch dims (all but the last two).
int64_t batch_of(const pock_tensor_desc& t) {
  int64_t n = 1;
  for (int i = 0; i + 2 < t.rank; ++i) n *= t.dims[i];
  return n;
}

// 1: the operand has y's batch dims; 0: it is one matrix broadcast over them; -1: neither.
int batch_mode(const pock_tensor_desc& t, const pock_tensor_desc& y) {
  if (batch_of(t) == 1) return 0;
  if (t.rank != y.rank) return -1;
  for (int i = 0; i + 2 < t.rank; ++i) {
    if (t.dims[i] != y.dims[i]) return -1;
  }
  return 1;
}

bool encode_matmul(const pock_op_desc& op, Encoding* e) {
  if (!arity(op, 2, 2, 1)) return false;
  const pock_tensor_desc &a = op.inputs[0], &b = op.inputs[1], &y = op.outputs[0];
  if (a.rank < 2 || b.rank < 2 || y.rank < 2) return false;
  params::MatMulParams p;
  if (!params::parse(op, &p).is_ok() || p.bf16) return false;
  const int64_t m = p.transpose_a ? a.dims[a.rank - 1] : a.dims[a.rank - 2];
  const int64_t k = p.transpose_a ? a.dims[a.rank - 2] : a.dims[a.rank - 1];
  const int64_t kb = p.transpose_b ? b.dims[b.rank - 1] : b.dims[b.rank - 2];
  const int64_t n = p.transpose_b ? b.dims[b.rank - 2] : b.dims[b.rank - 1];
  const int am = batch_mode(a, y), bm = batch_mode(b, y);
  const int64_t batch = batch_of(y);
  if (k != kb || am < 0 || bm < 0 || y.dims[y.rank - 2] != m || y.dims[y.rank - 1] != n) return false;
  if (!fits_u32(batch * m * n) || !fits_u32(numel(a)) || !fits_u32(numel(b))) return false;
  hx_op& r = e->record;
  r.opcode = HX_OP_MATMUL;
  r.flags = (p.transpose_a ? HX_FLAG_TRANSPOSE_A : 0u) | (p.transpose_b ? HX_FLAG_TRANSPOSE_B : 0u);
  r.dim[0] = static_cast<uint32_t>(batch);
  r.dim[1] = static_cast<uint32_t>(m);
  r.dim[2] = static_cast<uint32_t>(n);
  r.dim[3] = static_cast<uint32_t>(k);
  r.dim[4] = static_cast<uint32_t>(am);
  r.dim[5] = static_cast<uint32_t>(bm);
  from_input(e, 0, 0);
  from_input(e, 1, 1);
  from_output(e, 3, 0);
  return true;
}

}  // namespace

const OpEncoder kLinalgEncoders[] = {
    {"Linear", encode_linear},
    {"MatMul", encode_matmul},
    {"LinearInt8", encode_linear_int8},
    {nullptr, nullptr},
};

}  // namespace pock::hexagon
