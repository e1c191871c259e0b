// MatMul and Linear through OpenBLAS sgemm (benchmarks/RESULTS.md: faster than Eigen here), or
// with compute "bf16" through bf16 operands (kernels/cpu/gemm_plan.hpp). Everything
// shape-dependent — leading dims, transposes, the batch offsets of a broadcast batched MatMul — is
// worked out once at prepare; a run is one GEMM per matrix pair, or a single one when the batch
// folds into M.
#include "kernels/cpu/cpu_families.hpp"

#ifdef POCK_HAVE_OPENBLAS
#include <algorithm>
#include <new>
#include <vector>

#include "kernels/cpu/blas.hpp"
#include "kernels/cpu/cpu_util.hpp"
#include "kernels/cpu/gemm_plan.hpp"
#include "kernels/params/gemm_shape.hpp"
#include "kernels/params/linalg.hpp"

namespace pock::cpu {
namespace {

// ---- MatMul ---------------------------------------------------------------------------------

bool matmul_accepts(const pock_op_desc& op) {
  if (op.num_inputs != 2 || op.num_outputs != 1) return false;
  const pock_tensor_desc &a = op.inputs[0], &b = op.inputs[1], &y = op.outputs[0];
  params::MatMulParams p;
  if (!params::parse(op, &p).is_ok()) return false;
  if (!is_gemm_operand(a, p.bf16) || !is_gemm_operand(b, p.bf16) || !is_f32(y)) return false;
  if (a.rank < 2 || b.rank < 2 || y.rank < 2) return false;
  const int64_t k = p.transpose_a ? a.dims[a.rank - 2] : a.dims[a.rank - 1];
  return fits_blas_int(y.dims[y.rank - 2]) && fits_blas_int(y.dims[y.rank - 1]) && fits_blas_int(k) &&
         fits_blas_int(a.dims[a.rank - 1]) && fits_blas_int(b.dims[b.rank - 1]);
}

Status matmul_prepare(const pock_op_desc& op, KernelScope& scope, void** state) {
  const KernelCall c = call_of(op);
  const pock_tensor_desc &a = op.inputs[0], &b = op.inputs[1], &y = op.outputs[0];
  params::MatMulParams p;
  POCK_RETURN_IF_ERROR(params::parse(op, &p));
  auto* plan = new (std::nothrow) GemmPlan;
  if (!plan) return Status(Code::kOutOfMemory, "MatMul plan");
  plan->transpose_a = p.transpose_a;
  plan->transpose_b = p.transpose_b;
  plan->m = y.dims[y.rank - 2];
  plan->n = y.dims[y.rank - 1];
  plan->k = plan->transpose_a ? a.dims[a.rank - 2] : a.dims[a.rank - 1];
  plan->lda = std::max<int64_t>(1, a.dims[a.rank - 1]);
  plan->ldb = std::max<int64_t>(1, b.dims[b.rank - 1]);
  const int64_t a_matrix = a.dims[a.rank - 2] * a.dims[a.rank - 1];
  const int64_t b_matrix = b.dims[b.rank - 2] * b.dims[b.rank - 1];
  if (!plan->transpose_a && dims_product(b, 0, b.rank - 2) == 1) {
    // b is one matrix shared by every batch: a's rows are contiguous, so the batch is one tall GEMM.
    plan->m = dims_product(y, 0, y.rank - 1);  // batch * M
    plan->a_offsets = {0};
    plan->b_offsets = {0};
  } else {
    params::broadcast_batch_offsets(a, b, y, &plan->a_offsets, &plan->b_offsets);
    for (int64_t& o : plan->a_offsets) o *= a_matrix;
    for (int64_t& o : plan->b_offsets) o *= b_matrix;
  }
  if (!fits_blas_int(plan->m)) {
    delete plan;
    return c.error("too many rows for cblas");
  }
  plan->bf16 = p.bf16;
  plan->b_use = bf16_weight_use(b, params::Bf16Weight::kOwn);  // a frozen b is converted once
  const Status prepared = plan->prepare(a, b, scope, op.num_threads);
  if (!prepared.is_ok()) {
    delete plan;
    return c.error(prepared.message());
  }
  *state = plan;
  return Status::ok();
}

Status matmul_run(const KernelCall& c) {
  return static_cast<const GemmPlan*>(c.state)->run(c.in(0).data, c.in(1).data, nullptr, c.out_data<float>(0));
}

void gemm_release(void* state) { delete static_cast<GemmPlan*>(state); }

// ---- Linear: y = x wᵀ + b ---------------------------------------------------------------------

bool linear_accepts(const pock_op_desc& op) {
  if (op.num_inputs < 2 || op.num_outputs != 1) return false;
  const pock_tensor_desc &x = op.inputs[0], &w = op.inputs[1], &y = op.outputs[0];
  params::MatMulParams p;
  if (!params::parse(op, &p).is_ok()) return false;
  if (!is_gemm_operand(x, p.bf16) || !is_gemm_operand(w, p.bf16) || !is_f32(y) || x.rank < 1 || w.rank != 2) return false;
  if (op.num_inputs > 2 && is_present(op.inputs[2]) && !is_f32(op.inputs[2])) return false;
  return fits_blas_int(dims_product(x, 0, x.rank - 1)) && fits_blas_int(w.dims[0]) && fits_blas_int(w.dims[1]);
}

Status linear_prepare(const pock_op_desc& op, KernelScope& scope, void** state) {
  const pock_tensor_desc &x = op.inputs[0], &w = op.inputs[1];
  params::MatMulParams p;
  POCK_RETURN_IF_ERROR(params::parse(op, &p));
  auto* plan = new (std::nothrow) GemmPlan;
  if (!plan) return Status(Code::kOutOfMemory, "Linear plan");
  plan->m = dims_product(x, 0, x.rank - 1);
  plan->n = w.dims[0];
  plan->k = w.dims[1];
  plan->transpose_b = true;  // w is [N, K] (PyTorch layout): read as its transpose, never copied
  plan->lda = std::max<int64_t>(1, plan->k);
  plan->ldb = std::max<int64_t>(1, plan->k);
  plan->a_offsets = {0};
  plan->b_offsets = {0};
  plan->activation = p.activation;
  plan->bias = op.num_inputs > 2 && is_present(op.inputs[2]);
  plan->bf16 = p.bf16;
  plan->b_use = bf16_weight_use(w, p.bf16_weight);
  const Status prepared = plan->prepare(x, w, scope, op.num_threads);
  if (!prepared.is_ok()) {
    delete plan;
    return call_of(op).error(prepared.message());
  }
  *state = plan;
  return Status::ok();
}

Status linear_run(const KernelCall& c) {
  const float* bias = c.num_inputs() > 2 && c.has_input(2) ? c.in_data<float>(2) : nullptr;
  return static_cast<const GemmPlan*>(c.state)->run(c.in(0).data, c.in(1).data, bias, c.out_data<float>(0));
}

KernelDef def(const char* op, DType key, KernelFn run, KernelScopedPrepareFn prepare, bool (*accepts)(const pock_op_desc&)) {
  KernelDef d{op, key, run, kCpuScore, nullptr, gemm_release};
  d.accepts = accepts;
  d.prepare_scoped = prepare;
  return d;
}

}  // namespace

void register_linalg(KernelTable& t) {
  // Keyed by the first operand's dtype: bf16 when it is the compiler's bf16 copy of an activation.
  for (DType key : {DType::kF32, DType::kBF16}) {
    t.add(def("MatMul", key, matmul_run, matmul_prepare, matmul_accepts));
    t.add(def("Linear", key, linear_run, linear_prepare, linear_accepts));
  }
}

}  // namespace pock::cpu

#else  // no OpenBLAS: MatMul and Linear run on ref

namespace pock::cpu {
void register_linalg(KernelTable&) {}
}  // namespace pock::cpu

#endif
