#include "kernels/cuda/device_info.hpp"

#include <cuda_runtime.h>

#include <vector>

namespace pock::cuda {
namespace {

std::string describe(cudaError_t error) {
  return std::string(cudaGetErrorName(error)) + " (" + cudaGetErrorString(error) + ")";
}

// y = a * x + y: small enough to check on the host, real enough to need this build's SASS/PTX.
__global__ void axpy(int n, float a, const float* x, float* y) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

// Frees device buffers on every path out of run_smoke_kernel.
struct DeviceBuffers {
  float* x = nullptr;
  float* y = nullptr;
  ~DeviceBuffers() {
    cudaFree(x);
    cudaFree(y);
  }
};

}  // namespace

DeviceQuery query_devices() {
  DeviceQuery query;
  cudaRuntimeGetVersion(&query.runtime_version);
  cudaDriverGetVersion(&query.driver_version);
  int count = 0;
  const cudaError_t error = cudaGetDeviceCount(&count);
  if (error != cudaSuccess) {
    cudaGetLastError();  // clear the sticky error so later calls start clean
    query.unavailable_reason = describe(error);
    return query;
  }
  if (count == 0) {
    query.unavailable_reason = "the driver reports no CUDA device";
    return query;
  }
  for (int i = 0; i < count; ++i) {
    cudaDeviceProp properties{};
    if (cudaGetDeviceProperties(&properties, i) != cudaSuccess) continue;
    DeviceInfo info;
    info.index = i;
    info.name = properties.name;
    info.compute_major = properties.major;
    info.compute_minor = properties.minor;
    info.total_memory = properties.totalGlobalMem;
    info.multiprocessors = properties.multiProcessorCount;
    query.devices.push_back(info);
  }
  if (query.devices.empty()) query.unavailable_reason = "no device answered a properties query";
  return query;
}

Status run_smoke_kernel(int device) {
  auto fail = [](const char* step, cudaError_t error) {
    cudaGetLastError();
    return Status(Code::kInternal, std::string("CUDA smoke kernel: ") + step + " failed: " + describe(error));
  };
  cudaError_t error = cudaSetDevice(device);
  if (error != cudaSuccess) return fail("cudaSetDevice", error);

  constexpr int kCount = 1000;
  std::vector<float> x(kCount), y(kCount);
  for (int i = 0; i < kCount; ++i) {
    x[i] = static_cast<float>(i);
    y[i] = 1.0f;
  }
  DeviceBuffers buffers;
  if ((error = cudaMalloc(&buffers.x, kCount * sizeof(float))) != cudaSuccess) return fail("cudaMalloc", error);
  if ((error = cudaMalloc(&buffers.y, kCount * sizeof(float))) != cudaSuccess) return fail("cudaMalloc", error);
  if ((error = cudaMemcpy(buffers.x, x.data(), kCount * sizeof(float), cudaMemcpyHostToDevice)) != cudaSuccess) {
    return fail("copy to device", error);
  }
  if ((error = cudaMemcpy(buffers.y, y.data(), kCount * sizeof(float), cudaMemcpyHostToDevice)) != cudaSuccess) {
    return fail("copy to device", error);
  }
  axpy<<<(kCount + 255) / 256, 256>>>(kCount, 2.0f, buffers.x, buffers.y);
  // A launch error here usually means no code for this GPU's architecture in the build.
  if ((error = cudaGetLastError()) != cudaSuccess) return fail("kernel launch", error);
  if ((error = cudaDeviceSynchronize()) != cudaSuccess) return fail("kernel run", error);
  if ((error = cudaMemcpy(y.data(), buffers.y, kCount * sizeof(float), cudaMemcpyDeviceToHost)) != cudaSuccess) {
    return fail("copy to host", error);
  }
  for (int i = 0; i < kCount; ++i) {
    const float expected = 2.0f * static_cast<float>(i) + 1.0f;
    if (y[i] != expected) {
      return Status(Code::kInternal, "CUDA smoke kernel: y[" + std::to_string(i) + "] = " + std::to_string(y[i]) +
                                         ", expected " + std::to_string(expected));
    }
  }
  return Status::ok();
}

}  // namespace pock::cuda
