#include "kernels/cuda/gemm.hpp"

#include <cublas_v2.h>

#include <cstdlib>
#include <cstring>

#include "kernels/cuda/cublas_api.hpp"
#include "kernels/cuda/cuda_util.hpp"
#include "kernels/cuda/stream.hpp"

namespace pock::cuda {
namespace {

cudaDataType data_type(pock_dtype dtype) {
  switch (dtype) {
    case POCK_F16: return CUDA_R_16F;
    case POCK_BF16: return CUDA_R_16BF;
    default: return CUDA_R_32F;
  }
}

}  // namespace

bool gemm_allows_tf32() {
  static const bool allowed = [] {
    const char* env = std::getenv("POCK_CUDA_TF32");
    return env && std::strcmp(env, "1") == 0;
  }();
  return allowed;
}

GemmMath gemm_math(const params::MatMulParams& p) {
  if (p.bf16) return GemmMath::kBf16;
  return gemm_allows_tf32() ? GemmMath::kTf32 : GemmMath::kExact;
}

bool gemm_attributes_supported(const pock_op_desc& op) {
  params::MatMulParams p;
  if (!params::parse(op, &p).is_ok()) return false;
  return !p.bf16 || op.inputs[0].dtype == POCK_F32 || op.inputs[0].dtype == POCK_BF16;
}

bool gemm_fits(const GemmShape& s, int64_t batch) {
  return fits_int(s.m) && fits_int(s.n) && fits_int(s.k) && fits_int(batch) && fits_int(s.ta ? s.m : s.k) &&
         fits_int(s.tb ? s.k : s.n);
}

// The column-major arguments come from gemm_layout.hpp (checked on the host by tests/cuda_logic).
Status gemm(pock_dtype dtype, const GemmShape& s, float alpha, const void* a, const void* b, float beta, void* c,
            const GemmBatch& batch, GemmMath math, const std::string& what) {
  if (s.m == 0 || s.n == 0 || batch.count == 0) return Status::ok();
  const cudaDataType type = data_type(dtype);
  cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
  if (dtype == POCK_F32 && math == GemmMath::kTf32) compute = CUBLAS_COMPUTE_32F_FAST_TF32;
  if (dtype == POCK_F32 && math == GemmMath::kBf16) compute = CUBLAS_COMPUTE_32F_FAST_16BF;
  const ColumnMajorGemm g = column_major(s);
  const cublasOperation_t op_b = g.transpose_first ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_a = g.transpose_second ? CUBLAS_OP_T : CUBLAS_OP_N;
  const int rows = static_cast<int>(g.rows), cols = static_cast<int>(g.cols), depth = static_cast<int>(g.depth);
  const int ldb = static_cast<int>(g.ld_first), lda = static_cast<int>(g.ld_second), ldc = static_cast<int>(g.ld_out);
  cublasHandle_t handle = current_cublas();
  const CublasApi* blas = cublas_api(nullptr);
  if (!handle || !blas) return Status(Code::kInternal, what + ": no cuBLAS handle (called outside the cuda backend)");
  cublasStatus_t st;
  if (batch.a_pointers) {
    st = blas->gemm_batched(handle, op_b, op_a, rows, cols, depth, &alpha, batch.b_pointers, type, ldb, batch.a_pointers, type, lda,
                             &beta, batch.c_pointers, type, ldc, static_cast<int>(batch.count), compute,
                             CUBLAS_GEMM_DEFAULT);
  } else {
    st = blas->gemm_strided_batched(handle, op_b, op_a, rows, cols, depth, &alpha, b, type, ldb, batch.stride_b, a, type, lda,
                                    batch.stride_a, &beta, c, type, ldc, batch.stride_c, static_cast<int>(batch.count),
                                    compute, CUBLAS_GEMM_DEFAULT);
  }
  return check(st, what + ": cuBLAS GEMM");
}

}  // namespace pock::cuda
