// Every cuda kernel against the reference kernels on random inputs, through the backend ABI: the
// cases of kernel_cases.hpp (written per family, generic for the plain f32 kernels). An f32
// kernel that no case reaches fails the test, so a family added to cuda_families.def is covered or
// visibly not (test_cuda_kernel_cases checks the same, and that ref and cpu run every case,
// without a GPU). Without a GPU every case here says "skipped: no CUDA device".
#include <catch2/catch.hpp>

#include <cstdlib>

#include "tests/cuda/device_op.hpp"
#include "tests/cuda/kernel_coverage.hpp"

using namespace pock;
using namespace pock::test;

namespace {

// Runs one case on both backends; cuda must claim it and ref must run it.
void check_case(CudaBackend& cuda, pock_backend_v1& ref, const DeviceCase& c) {
  if (cuda.score(c) <= 0) {
    FAIL_CHECK("cuda does not claim " << c.op << " as the case describes it");
    return;
  }
  const DType dtype = c.inputs.empty() ? DType::kF32 : c.inputs[0].dtype;
  const bool widen = dtype == DType::kF16 || dtype == DType::kBF16;
  const OpResults want = run_on_host(ref, c, widen);
  if (!want.status.is_ok()) {
    FAIL_CHECK("ref failed on the " << c.op << " case: " << want.status.message());
    return;
  }
  const OpResults got = cuda.run(c);
  INFO(c.op << " on cuda: " << got.status.message());
  REQUIRE(got.status.is_ok());
  check_results(got, want, c, widen, "cuda");
}

}  // namespace

TEST_CASE("every cuda kernel equals ref on random inputs", "[cuda]") {
  if (skip_without_gpu()) return;
  CudaBackend cuda;
  HostTableBackend ref("ref", ref_kernels());
  const std::vector<DeviceCase> written = written_cases();
  const CudaCoverage coverage = plan_coverage(cuda, ref.abi(), written);
  for (const DeviceCase& c : written) check_case(cuda, ref.abi(), c);
  for (const DeviceCase& c : coverage.generic) check_case(cuda, ref.abi(), c);
  require_full_coverage(coverage);
}

TEST_CASE("a recorded run of ops is captured once and its replays compute each time", "[cuda]") {
  if (skip_without_gpu()) return;
  REQUIRE(setenv("POCK_CUDA_GRAPHS", "1", 1) == 0);
  CudaBackend cuda;  // reads the switch here
  unsetenv("POCK_CUDA_GRAPHS");
  pock_backend_v1& b = cuda.abi();
  auto graphs = reinterpret_cast<size_t (*)(void*)>(b.get_proc_address(b.context, kCudaGraphCountExtension));
  REQUIRE(graphs != nullptr);
  // acc += g, four times: op by op, then captured, then replayed twice.
  const DeviceCase c{"AccumulateGrad", {rnd({33, 7}, 70), rnd({33, 7}, 71)}, {}};
  auto described = describe_case(c, false);
  REQUIRE(described.is_ok());
  auto d = SpecOpDesc::describe(described->spec, described->spec.ops[0], 1);
  REQUIRE(d.is_ok());
  std::vector<void*> buffers;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    void* p = b.alloc(b.context, c.inputs[i].bytes.size(), 64);
    REQUIRE(p != nullptr);
    buffers.push_back(p);
    REQUIRE(b.copy(b.context, p, c.inputs[i].bytes.data(), c.inputs[i].bytes.size(), POCK_COPY_HOST_TO_DEVICE) == POCK_OK);
    d->input(i).data = p;
    d->input(i).memory_space = POCK_MEMORY_DEVICE;
  }
  void* handle = nullptr;
  REQUIRE(b.prepare_op(b.context, &d->desc(), &handle) == POCK_OK);
  auto sync = reinterpret_cast<pock_synchronize_fn>(b.get_proc_address(b.context, POCK_EXT_SYNCHRONIZE));
  for (int run = 0; run < 4; ++run) {
    REQUIRE(b.execute_op(b.context, handle, &d->desc()) == POCK_OK);
    INFO(b.last_error(b.context));
    REQUIRE(sync(b.context) == POCK_OK);
  }
  CHECK(graphs(b.context) == 1);
  HostOperand acc = c.inputs[0];
  REQUIRE(b.copy(b.context, acc.bytes.data(), buffers[0], acc.bytes.size(), POCK_COPY_DEVICE_TO_HOST) == POCK_OK);
  const std::vector<float> got = acc.floats(), a0 = c.inputs[0].floats(), g = c.inputs[1].floats();
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i);
    CHECK(got[i] == Approx(a0[i] + 4.0f * g[i]).epsilon(1e-6).margin(1e-6));
  }
  b.release_op(b.context, handle);
  CHECK(graphs(b.context) == 0);  // releasing an op drops the graphs
  for (void* p : buffers) b.free(b.context, p);
}
