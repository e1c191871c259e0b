// cuBLAS, opened with dlopen when the first cuda instance starts rather than linked: loading
// cuBLAS (and the cuBLASLt it needs) costs a process about 210 MB of resident memory, which an app
// that links pock_runtime but trains on the host — or a compiler, or pockc --help — must not pay.
// Only the entry points the backend calls are resolved; kernels reach them through cublas_api().
#pragma once
#include <cublas_v2.h>

#include <string>

namespace pock::cuda {

struct CublasApi {
  cublasStatus_t (*create)(cublasHandle_t*);
  cublasStatus_t (*destroy)(cublasHandle_t);
  cublasStatus_t (*set_stream)(cublasHandle_t, cudaStream_t);
  cublasStatus_t (*set_atomics_mode)(cublasHandle_t, cublasAtomicsMode_t);
  cublasStatus_t (*gemm_strided_batched)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
                                         const void*, const void*, cudaDataType, int, long long, const void*,
                                         cudaDataType, int, long long, const void*, void*, cudaDataType, int,
                                         long long, int, cublasComputeType_t, cublasGemmAlgo_t);
  cublasStatus_t (*gemm_batched)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const void*,
                                 const void* const[], cudaDataType, int, const void* const[], cudaDataType, int,
                                 const void*, void* const[], cudaDataType, int, int, cublasComputeType_t,
                                 cublasGemmAlgo_t);
  cublasStatus_t (*set_workspace)(cublasHandle_t, void*, size_t);
  const char* (*status_name)(cublasStatus_t);
  const char* (*status_string)(cublasStatus_t);
};

// The process's cuBLAS, opened once (thread-safe); nullptr, with the reason in *why, when the
// library or one of the entry points is missing.
const CublasApi* cublas_api(std::string* why);

// The loaded cuBLAS's own name for a status, or its number before cuBLAS is loaded.
std::string cublas_status_text(cublasStatus_t status);

}  // namespace pock::cuda
