// LinearInputGrad and LinearWeightGrad through OpenBLAS sgemm (or, with compute "bf16", bf16
// operands: kernels/cpu/gemm_plan.hpp), over the rows M = prod(leading dims) of dy [..., N]:
//   dx [M, K] = dy [M, N] w [N, K]
//   dw [N, K] = dyᵀ [N, M] x [M, K]     (x's rows read as a transposed operand, never copied)
// Without OpenBLAS both run on ref.
#include "kernels/cpu/cpu_families.hpp"

#ifdef POCK_HAVE_OPENBLAS
#include <algorithm>
#include <new>
#include <string>
#include <string_view>

#include "kernels/cpu/blas.hpp"
#include "kernels/cpu/cpu_util.hpp"
#include "kernels/cpu/gemm_plan.hpp"
#include "kernels/params/linalg.hpp"

namespace pock::cpu {
namespace {

int64_t leading_rows(const pock_tensor_desc& t) { return t.rank > 0 ? dims_product(t, 0, t.rank - 1) : 1; }
int64_t last_dim(const pock_tensor_desc& t) { return t.rank > 0 ? t.dims[t.rank - 1] : 1; }

// f32 operands, or with compute "bf16" f32 or bf16 ones; the gradient is f32.
bool dtypes_fit(const pock_op_desc& op) {
  params::MatMulParams p;
  return op.num_inputs == 2 && op.num_outputs == 1 && params::parse(op, &p).is_ok() &&
         is_gemm_operand(op.inputs[0], p.bf16) && is_gemm_operand(op.inputs[1], p.bf16) && is_f32(op.outputs[0]);
}

bool input_grad_accepts(const pock_op_desc& op) {
  if (!dtypes_fit(op)) return false;
  const pock_tensor_desc &dy = op.inputs[0], &w = op.inputs[1], &dx = op.outputs[0];
  if (w.rank != 2 || last_dim(dy) != w.dims[0] || numel(dx) != leading_rows(dy) * w.dims[1]) return false;
  return fits_blas_int(leading_rows(dy)) && fits_blas_int(w.dims[0]) && fits_blas_int(w.dims[1]);
}

bool weight_grad_accepts(const pock_op_desc& op) {
  if (!dtypes_fit(op)) return false;
  const pock_tensor_desc &dy = op.inputs[0], &x = op.inputs[1], &dw = op.outputs[0];
  if (leading_rows(dy) != leading_rows(x) || numel(dw) != last_dim(dy) * last_dim(x)) return false;
  return fits_blas_int(leading_rows(dy)) && fits_blas_int(last_dim(dy)) && fits_blas_int(last_dim(x));
}

// dx [M, K] = dy [M, N] w [N, K], or dw [N, K] = dyᵀ [N, M] x [M, K].
Status prepare(const pock_op_desc& op, KernelScope& scope, void** state) {
  params::MatMulParams p;
  POCK_RETURN_IF_ERROR(params::parse(op, &p));
  const pock_tensor_desc &dy = op.inputs[0], &other = op.inputs[1];
  const int64_t m = leading_rows(dy), n = last_dim(dy), k = last_dim(other);
  auto* plan = new (std::nothrow) GemmPlan;
  if (!plan) return Status(Code::kOutOfMemory, std::string(op.op) + " plan");
  if (std::string_view(op.op) == "LinearInputGrad") {
    plan->m = m, plan->n = k, plan->k = n;
    plan->b_use = bf16_weight_use(other, p.bf16_weight);  // the weight: maybe its forward's bf16 copy
  } else {
    plan->m = n, plan->n = k, plan->k = m;
    plan->transpose_a = true;
  }
  plan->a_offsets = {0};
  plan->b_offsets = {0};
  plan->lda = std::max<int64_t>(1, n);
  plan->ldb = std::max<int64_t>(1, k);
  plan->bf16 = p.bf16;
  const Status prepared = plan->prepare(dy, other, scope, op.num_threads);
  if (!prepared.is_ok()) {
    delete plan;
    return call_of(op).error(prepared.message());
  }
  *state = plan;
  return Status::ok();
}

void release(void* state) { delete static_cast<GemmPlan*>(state); }

Status run(const KernelCall& c) {
  return static_cast<const GemmPlan*>(c.state)->run(c.in(0).data, c.in(1).data, nullptr, c.out_data<float>(0));
}

KernelDef def(const char* op, DType key, bool (*accepts)(const pock_op_desc&)) {
  KernelDef d{op, key, run, kCpuScore, nullptr, release};
  d.accepts = accepts;
  d.prepare_scoped = prepare;
  return d;
}

}  // namespace

void register_linear_grad(KernelTable& t) {
  // Keyed by dy's dtype: bf16 when it is the compiler's bf16 copy.
  for (DType key : {DType::kF32, DType::kBF16}) {
    t.add(def("LinearInputGrad", key, input_grad_accepts));
    t.add(def("LinearWeightGrad", key, weight_grad_accepts));
  }
}

}  // namespace pock::cpu

#else  // no OpenBLAS: both run on ref

namespace pock::cpu {
void register_linear_grad(KernelTable&) {}
}  // namespace pock::cpu

#endif
