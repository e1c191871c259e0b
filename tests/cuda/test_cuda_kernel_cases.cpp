// The cases test_cuda_kernels runs on a GPU, checked where there is none: each written case is one
// cuda claims and ref runs (a case ref refuses is malformed, and would only fail on the GPU), every
// f32 kernel of the cuda table is reached by a case, and the cpu backend agrees with ref on every
// case it has a kernel for (the same ABI path, the same comparison as for cuda).
#include <catch2/catch.hpp>

#include "tests/cuda/device_op.hpp"
#include "tests/cuda/kernel_coverage.hpp"

using namespace pock;
using namespace pock::test;

namespace {

bool is_half(const DeviceCase& c) {
  return !c.inputs.empty() && (c.inputs[0].dtype == DType::kF16 || c.inputs[0].dtype == DType::kBF16);
}

}  // namespace

TEST_CASE("every written cuda case is claimed by cuda and run by ref", "[cuda]") {
  CudaBackend cuda;  // claiming reads the kernel table: no device needed
  HostTableBackend ref("ref", ref_kernels());
  for (const DeviceCase& c : written_cases()) {
    INFO(c.op << " on " << dtype_name(c.inputs[0].dtype) << " inputs");
    CHECK(cuda.score(c) > 0);
    const OpResults want = run_on_host(ref.abi(), c, is_half(c));
    INFO("ref: " << want.status.message());
    CHECK(want.status.is_ok());
  }
}

TEST_CASE("the cuda kernel cases reach every f32 kernel of the cuda table", "[cuda]") {
  CudaBackend cuda;
  HostTableBackend ref("ref", ref_kernels());
  const CudaCoverage coverage = plan_coverage(cuda, ref.abi(), written_cases());
  CHECK(coverage.kernels > 0);
  require_full_coverage(coverage);
}

TEST_CASE("cpu equals ref on the cuda kernel cases", "[cuda][cpu]") {
  HostTableBackend ref("ref", ref_kernels()), cpu("cpu", cpu_kernels());
  int compared = 0;
  for (const DeviceCase& c : written_cases()) {
    if (!cpu.supports(c, false)) continue;  // left to ref (the runtime's fallback)
    const OpResults want = run_on_host(ref.abi(), c, is_half(c));
    const OpResults got = run_on_host(cpu.abi(), c, false);
    INFO(c.op << " on cpu: " << got.status.message());
    REQUIRE(want.status.is_ok());
    REQUIRE(got.status.is_ok());
    check_results(got, want, c, is_half(c), "cpu");
    ++compared;
  }
  CHECK(compared > 100);
}
