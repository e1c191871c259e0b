// The CUDA backend's per-instance resources as its kernels see them. cuda_backend.cpp sets them
// for the calling thread around every prepare_op/execute_op, so a kernel's run() takes no extra
// arguments (the in-tree KernelFn signature) and never creates a stream or handle itself.
#pragma once
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include <string>

#include "pock/status.hpp"

namespace pock::cuda {

cudaStream_t current_stream();
cublasHandle_t current_cublas();  // bound to current_stream(); call cuBLAS through cublas_api.hpp (dlopen)
cudnnHandle_t current_cudnn();    // bound to current_stream(); created on first use

// Scratch device memory owned by the backend instance, grown at prepare time only (a kernel asks
// in its prepare for what its run will need; run never allocates).
Status reserve_workspace(size_t bytes);
void* workspace();
size_t workspace_size();

// "<what>: <CUDA error name> (<message>)" as a Status (kInternal), or ok for cudaSuccess.
Status check(cudaError_t error, const std::string& what);
Status check(cublasStatus_t status, const std::string& what);
Status check(cudnnStatus_t status, const std::string& what);

}  // namespace pock::cuda
