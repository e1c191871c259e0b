// POCK_HD marks the per-element logic of CUDA kernels (functors, row routines) as callable from
// both device and host code. The logic headers of kernels/cuda include only this and the standard
// library, so that the C++ compiler builds them into tests/cuda_logic, where they are checked
// against kernels/ref on machines without a GPU; the .cu files launch the same code on the device.
#pragma once

#if defined(__CUDACC__)
#define POCK_HD __host__ __device__ __forceinline__
#else
#define POCK_HD inline
#endif
