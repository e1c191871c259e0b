// What the CUDA runtime sees on this machine. Plain C++ with no CUDA headers, so that host code
// and tests compiled by the C++ compiler can ask without nvcc.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "pock/status.hpp"

namespace pock::cuda {

struct DeviceInfo {
  int index = 0;
  std::string name;
  int compute_major = 0;  // compute capability, e.g. 8.7 for Jetson Orin, 9.0 for Hopper
  int compute_minor = 0;
  size_t total_memory = 0;
  int multiprocessors = 0;
};

struct DeviceQuery {
  int runtime_version = 0;          // the CUDA runtime this build links, e.g. 13000
  int driver_version = 0;           // 0 when no driver is installed
  std::vector<DeviceInfo> devices;  // empty when no device can be used
  std::string unavailable_reason;   // why `devices` is empty
};

// Never fails: a machine without a driver or a GPU gives an empty list and the reason.
DeviceQuery query_devices();

// Runs a small kernel on `device` and checks its result: proves that the device code of this
// build (CMAKE_CUDA_ARCHITECTURES) loads and runs on that GPU.
Status run_smoke_kernel(int device);

}  // namespace pock::cuda
