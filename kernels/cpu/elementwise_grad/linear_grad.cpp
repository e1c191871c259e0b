// LinearInputGrad and LinearWeightGrad through OpenBLAS sgemm, over the rows M = prod(leading
// dims) of dy [..., N]:
//   dx [M, K] = dy [M, N] w [N, K]
//   dw [N, K] = dyᵀ [N, M] x [M, K]     (x's rows read as a transposed operand, never copied)
// Without OpenBLAS both run on ref.
#include "kernels/cpu/cpu_families.hpp"

#ifdef POCK_HAVE_OPENBLAS
#include <algorithm>

#include "kernels/cpu/blas.hpp"
#include "kernels/cpu/cpu_util.hpp"

namespace pock::cpu {
namespace {

int64_t leading_rows(const pock_tensor_desc& t) { return t.rank > 0 ? dims_product(t, 0, t.rank - 1) : 1; }
int64_t last_dim(const pock_tensor_desc& t) { return t.rank > 0 ? t.dims[t.rank - 1] : 1; }
int blas_int(int64_t v) { return static_cast<int>(std::max<int64_t>(v, 1)); }

bool all_f32(const pock_op_desc& op) {
  return op.num_inputs == 2 && op.num_outputs == 1 && is_f32(op.inputs[0]) && is_f32(op.inputs[1]) &&
         is_f32(op.outputs[0]);
}

bool input_grad_accepts(const pock_op_desc& op) {
  if (!all_f32(op)) return false;
  const pock_tensor_desc &dy = op.inputs[0], &w = op.inputs[1], &dx = op.outputs[0];
  if (w.rank != 2 || last_dim(dy) != w.dims[0] || numel(dx) != leading_rows(dy) * w.dims[1]) return false;
  return fits_blas_int(leading_rows(dy)) && fits_blas_int(w.dims[0]) && fits_blas_int(w.dims[1]);
}

bool weight_grad_accepts(const pock_op_desc& op) {
  if (!all_f32(op)) return false;
  const pock_tensor_desc &dy = op.inputs[0], &x = op.inputs[1], &dw = op.outputs[0];
  if (leading_rows(dy) != leading_rows(x) || numel(dw) != last_dim(dy) * last_dim(x)) return false;
  return fits_blas_int(leading_rows(dy)) && fits_blas_int(last_dim(dy)) && fits_blas_int(last_dim(x));
}

Status prepare(const pock_op_desc& op, void** state) {
  configure_blas_threads(op.num_threads);
  *state = nullptr;
  return Status::ok();
}

Status input_grad(const KernelCall& c) {
  const int64_t m = leading_rows(c.in(0)), n = c.in(1).dims[0], k = c.in(1).dims[1];
  float* dx = c.out_data<float>(0);
  if (m == 0 || k == 0) return Status::ok();
  if (n == 0) {
    std::fill(dx, dx + m * k, 0.0f);
    return Status::ok();
  }
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, blas_int(m), blas_int(k), blas_int(n), 1.0f,
              c.in_data<float>(0), blas_int(n), c.in_data<float>(1), blas_int(k), 0.0f, dx, blas_int(k));
  return Status::ok();
}

Status weight_grad(const KernelCall& c) {
  const int64_t m = leading_rows(c.in(0)), n = last_dim(c.in(0)), k = last_dim(c.in(1));
  float* dw = c.out_data<float>(0);
  if (n == 0 || k == 0) return Status::ok();
  if (m == 0) {
    std::fill(dw, dw + n * k, 0.0f);
    return Status::ok();
  }
  cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, blas_int(n), blas_int(k), blas_int(m), 1.0f, c.in_data<float>(0),
              blas_int(n), c.in_data<float>(1), blas_int(k), 0.0f, dw, blas_int(k));
  return Status::ok();
}

KernelDef def(const char* op, KernelFn run, bool (*accepts)(const pock_op_desc&)) {
  KernelDef d{op, DType::kF32, run, kCpuScore, prepare};
  d.accepts = accepts;
  return d;
}

}  // namespace

void register_linear_grad(KernelTable& t) {
  t.add(def("LinearInputGrad", input_grad, input_grad_accepts));
  t.add(def("LinearWeightGrad", weight_grad, weight_grad_accepts));
}

}  // namespace pock::cpu

#else  // no OpenBLAS: both run on ref

namespace pock::cpu {
void register_linear_grad(KernelTable&) {}
}  // namespace pock::cpu

#endif
