// Linear's gradients on cuBLAS, over the rows M = prod(leading dims) of dy [..., N]:
//   LinearInputGrad:  dx [M, K] = dy [M, N] w [N, K]
//   LinearWeightGrad: dw [N, K] = dyᵀ [N, M] x [M, K]   (dy read as a transposed operand)
// f32 (exact f32 products; bf16 products for compute "bf16"; TF32 with POCK_CUDA_TF32=1), f16
// and bf16 with f32 accumulation.
#include "kernels/cuda/cuda_families.hpp"
#include "kernels/cuda/cuda_util.hpp"
#include "kernels/cuda/gemm.hpp"
#include "kernels/cuda/stream.hpp"
#include "kernels/params/linalg.hpp"

namespace pock::cuda {
namespace {

bool same_float(const pock_op_desc& op) {
  if (op.num_inputs != 2 || op.num_outputs != 1) return false;
  const pock_dtype d = op.inputs[0].dtype;
  if (d != POCK_F32 && d != POCK_F16 && d != POCK_BF16) return false;
  return op.inputs[1].dtype == d && op.outputs[0].dtype == d;
}

GemmShape input_grad_shape(const pock_op_desc& op) {
  return {false, false, leading_rows(op.inputs[0]), op.inputs[1].dims[1], op.inputs[1].dims[0]};
}

GemmShape weight_grad_shape(const pock_op_desc& op) {
  return {true, false, last_dim(op.inputs[0]), last_dim(op.inputs[1]), leading_rows(op.inputs[0])};
}

bool input_grad_accepts(const pock_op_desc& op) {
  if (!same_float(op) || !gemm_attributes_supported(op)) return false;
  const pock_tensor_desc &dy = op.inputs[0], &w = op.inputs[1], &dx = op.outputs[0];
  if (w.rank != 2 || last_dim(dy) != w.dims[0] || numel(dx) != leading_rows(dy) * w.dims[1]) return false;
  return gemm_fits(input_grad_shape(op), 1);
}

bool weight_grad_accepts(const pock_op_desc& op) {
  if (!same_float(op) || !gemm_attributes_supported(op)) return false;
  const pock_tensor_desc &dy = op.inputs[0], &x = op.inputs[1], &dw = op.outputs[0];
  if (leading_rows(dy) != leading_rows(x) || numel(dw) != last_dim(dy) * last_dim(x)) return false;
  return gemm_fits(weight_grad_shape(op), 1);
}

Status run_gemm(const KernelCall& c, const GemmShape& s, const params::MatMulParams& p) {
  const std::string what = std::string(c.desc->op) + " '" + c.desc->name + "'";
  if (s.k == 0) return check(cudaMemsetAsync(c.out(0).data, 0, c.out(0).nbytes, current_stream()), what + ": zero fill");
  return gemm(c.in(0).dtype, s, 1.0f, c.in(0).data, c.in(1).data, 0.0f, c.out(0).data, GemmBatch{}, gemm_math(p), what);
}

Status input_grad(const KernelCall& c, const params::MatMulParams& p) { return run_gemm(c, input_grad_shape(*c.desc), p); }
Status weight_grad(const KernelCall& c, const params::MatMulParams& p) { return run_gemm(c, weight_grad_shape(*c.desc), p); }

}  // namespace

void register_linear_grad(KernelTable& t) {
  for (DType dtype : {DType::kF32, DType::kF16, DType::kBF16}) {
    t.add(typed_kernel<params::MatMulParams, input_grad>("LinearInputGrad", dtype, kCudaScore, input_grad_accepts));
    t.add(typed_kernel<params::MatMulParams, weight_grad>("LinearWeightGrad", dtype, kCudaScore, weight_grad_accepts));
  }
}

}  // namespace pock::cuda
