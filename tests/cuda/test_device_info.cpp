// The CUDA backend's foundation: the runtime links, reports its devices, and this build's device
// code runs. Without a GPU each case says "skipped: no CUDA device" (Catch2 v2 has no skip).
#include <catch2/catch.hpp>

#include "kernels/cuda/device_info.hpp"

using namespace pock;

namespace {

bool skip_without_device(const cuda::DeviceQuery& query) {
  if (!query.devices.empty()) return false;
  WARN("skipped: no CUDA device (" << query.unavailable_reason << ")");
  return true;
}

}  // namespace

TEST_CASE("the CUDA runtime answers a device query", "[cuda]") {
  const cuda::DeviceQuery query = cuda::query_devices();
  CHECK(query.runtime_version >= 12000);  // built with CUDA 12 or 13
  if (skip_without_device(query)) {
    CHECK_FALSE(query.unavailable_reason.empty());
    return;
  }
  CHECK(query.driver_version > 0);
  for (const cuda::DeviceInfo& device : query.devices) {
    INFO("device " << device.index << ": " << device.name);
    WARN("CUDA device " << device.index << ": " << device.name << ", sm_" << device.compute_major
                        << device.compute_minor << ", " << (device.total_memory >> 20) << " MiB");
    CHECK_FALSE(device.name.empty());
    CHECK(device.compute_major >= 5);
    CHECK(device.total_memory > 0);
    CHECK(device.multiprocessors > 0);
  }
}

TEST_CASE("device code of this build runs on the first GPU", "[cuda]") {
  const cuda::DeviceQuery query = cuda::query_devices();
  if (skip_without_device(query)) return;
  const Status status = cuda::run_smoke_kernel(query.devices.front().index);
  INFO(status.message());
  CHECK(status.is_ok());
}
