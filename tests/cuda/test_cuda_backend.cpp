// The cuda backend as the runtime and the compiler see it. Without a GPU: it is built in, fills
// the ABI without touching a device, answers supports_op (so `pockc compile --backend cuda` works
// on any machine), places ops on cuda only when asked, and its first allocation fails with the
// reason. With a GPU: a small MLP trains on cuda as it does on cpu, step by step.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "blob/reader.hpp"
#include "kernels/cuda/cublas_api.hpp"
#include "kernels/params/linalg.hpp"
#include "runtime/backend_set.hpp"
#include "tests/cuda/device_op.hpp"
#include "tests/train/mlp_model.hpp"

using namespace pock;
using namespace pock::test;

namespace {

struct Backend {
  pock_backend_v1 b{};
  Backend() {
    b.abi_version = POCK_BACKEND_ABI_VERSION;
    b.struct_size = sizeof(pock_backend_v1);
    REQUIRE(builtin_backend_init_cuda(&b) == POCK_OK);
  }
  ~Backend() { b.destroy(b.context); }
};

// Linear x [8, 16] w [4, 16] b [4] -> y [8, 4], every tensor in `space`.
struct LinearDesc {
  pock_tensor_desc in[3]{}, out{};
  pock_op_desc op{};
  LinearDesc(uint32_t space, pock_dtype dtype = POCK_F32) {
    auto fill = [&](pock_tensor_desc& t, std::initializer_list<int64_t> dims) {
      t.dtype = dtype;
      t.rank = static_cast<int32_t>(dims.size());
      int r = 0;
      for (int64_t d : dims) t.dims[r++] = d;
      t.memory_space = space;
    };
    fill(in[0], {8, 16});
    fill(in[1], {4, 16});
    fill(in[2], {4});
    fill(out, {8, 4});
    op.op = "Linear";
    op.name = "probe";
    op.num_inputs = 3;
    op.inputs = in;
    op.num_outputs = 1;
    op.outputs = &out;
  }
};

ProgramSpec compiled_spec(const std::vector<uint8_t>& blob) {
  BlobView view;
  REQUIRE(open_blob(blob.data(), blob.size(), VerifyOptions{}, &view).is_ok());
  auto spec = read_program_spec(view, false);
  REQUIRE(spec.is_ok());
  return std::move(spec.value());
}

Recipe recipe(const std::string& optimizer) {
  Recipe r = classifier_recipe();
  r.optimizer.type = optimizer;
  r.optimizer.lr = optimizer == "sgd" ? 0.1 : 0.01;
  if (optimizer == "sgd") r.optimizer.momentum = 0.9;  // adam's is beta1: the recipe refuses momentum
  r.optimizer.weight_decay = 0.01;
  return r;
}

// Six steps of the same batches on two engines; each step's losses agree within `tolerance`
// relative to |want| + 1.
// The program of `g` compiled with `r` for --backend cuda.
ProgramSpec cuda_spec(const Graph& g, const Recipe& r) {
  CompileOptions options;
  options.backend = "cuda";
  auto device = compile(g, &r, options);
  INFO(device.status().message());
  REQUIRE(device.is_ok());
  return compiled_spec(device.value());
}

void train_side_by_side(Engine& want_engine, Engine& got_engine, double tolerance) {
  for (int step = 0; step < 6; ++step) {
    const Batch batch = make_batch(step);
    REQUIRE(feed(want_engine, batch).is_ok());
    REQUIRE(feed(got_engine, batch).is_ok());
    auto want = want_engine.train_step();
    auto got = got_engine.train_step();
    INFO("step " << step << ": " << got.status().message());
    REQUIRE(want.is_ok());
    REQUIRE(got.is_ok());
    CHECK(std::fabs(got.value() - want.value()) <= tolerance * (std::fabs(want.value()) + 1.0));
  }
}

}  // namespace

TEST_CASE("cuda is a built-in backend that fills the ABI without touching a GPU", "[cuda]") {
  const std::vector<std::string> names = builtin_backend_names();
  CHECK(std::find(names.begin(), names.end(), "cuda") != names.end());
  Backend cuda;
  CHECK(std::string(cuda.b.name) == "cuda");
  CHECK(cuda.b.alloc != nullptr);
  CHECK(cuda.b.free != nullptr);
  CHECK(cuda.b.copy != nullptr);
  for (const char* ext : {POCK_EXT_SYNCHRONIZE, POCK_EXT_ALL_FINITE, POCK_EXT_WORKSPACE_BYTES, POCK_EXT_ZERO}) {
    INFO(ext);
    CHECK(cuda.b.get_proc_address(cuda.b.context, ext) != nullptr);
  }
  CHECK(cuda.b.get_proc_address(cuda.b.context, "no_such_extension") == nullptr);
  CHECK(reinterpret_cast<pock_workspace_bytes_fn>(cuda.b.get_proc_address(cuda.b.context, POCK_EXT_WORKSPACE_BYTES))(
            cuda.b.context) == 0);
}

TEST_CASE("cuda's supports_op answers without a GPU, for device memory only", "[cuda]") {
  Backend cuda;
  LinearDesc device(POCK_MEMORY_DEVICE), host(POCK_MEMORY_HOST), bf16(POCK_MEMORY_DEVICE, POCK_BF16);
  CHECK(cuda.b.supports_op(cuda.b.context, &device.op) > 0);
  CHECK(cuda.b.supports_op(cuda.b.context, &bf16.op) > 0);
  CHECK(cuda.b.supports_op(cuda.b.context, &host.op) == 0);
  device.in[2].memory_space = POCK_MEMORY_HOST;  // one tensor elsewhere is enough to decline
  CHECK(cuda.b.supports_op(cuda.b.context, &device.op) == 0);
  LinearDesc wrong(POCK_MEMORY_DEVICE);
  wrong.in[1].dims[1] = 15;  // w [4, 15] does not match x [8, 16]
  CHECK(cuda.b.supports_op(cuda.b.context, &wrong.op) == 0);
  LinearDesc unknown(POCK_MEMORY_DEVICE);
  unknown.op.op = "NoSuchOp";
  CHECK(cuda.b.supports_op(cuda.b.context, &unknown.op) == 0);
}

TEST_CASE("cuda's first allocation says why when there is no GPU", "[cuda]") {
  const cuda::DeviceQuery query = cuda::query_devices();
  Backend cuda;
  void* p = cuda.b.alloc(cuda.b.context, 1024, 64);
  if (!query.devices.empty()) {
    CHECK(p != nullptr);
    cuda.b.free(cuda.b.context, p);
    return;
  }
  CHECK(p == nullptr);
  const std::string why = cuda.b.last_error(cuda.b.context);
  INFO(why);
  CHECK(why.find("no usable GPU") != std::string::npos);
  // Every later call gives the same reason; copy and prepare fail cleanly too.
  CHECK(cuda.b.alloc(cuda.b.context, 16, 64) == nullptr);
  float x = 0.0f;
  CHECK(cuda.b.copy(cuda.b.context, &x, &x, sizeof x, POCK_COPY_HOST_TO_DEVICE) != POCK_OK);
  LinearDesc device(POCK_MEMORY_DEVICE);
  void* handle = nullptr;
  CHECK(cuda.b.prepare_op(cuda.b.context, &device.op, &handle) != POCK_OK);
  CHECK(std::string(cuda.b.last_error(cuda.b.context)).find("no usable GPU") != std::string::npos);
}

TEST_CASE("a compile places ops on cuda only when asked, and then only what cuda runs", "[cuda]") {
  const Graph g = build_mlp();
  const Recipe r = classifier_recipe();
  auto host = compile(g, &r, CompileOptions{});
  REQUIRE(host.is_ok());
  const ProgramSpec host_spec = compiled_spec(host.value());
  CHECK(host_spec.spaces.empty());
  for (const OpSpec& op : host_spec.ops) CHECK(op.backend != "cuda");

  const ProgramSpec spec = cuda_spec(g, r);
  REQUIRE(spec.spaces.size() == 1);
  CHECK(spec.spaces[0].backend == "cuda");
  int on_cuda = 0, linear_on_cuda = 0, updates_on_cuda = 0;
  Backend cuda;
  for (const OpSpec& op : spec.ops) {
    if (op.backend != "cuda" || op.op == "Copy") continue;
    ++on_cuda;
    auto d = SpecOpDesc::describe(spec, op, 0);
    REQUIRE(d.is_ok());
    for (size_t i = 0; i < d->num_inputs(); ++i) d->input(i).memory_space = POCK_MEMORY_DEVICE;
    for (size_t i = 0; i < d->num_outputs(); ++i) d->output(i).memory_space = POCK_MEMORY_DEVICE;
    INFO(op.op << " '" << op.name << "' was placed on cuda");
    CHECK(cuda.b.supports_op(cuda.b.context, &d->desc()) > 0);
    linear_on_cuda += op.op == "Linear" || op.op == "LinearInputGrad" || op.op == "LinearWeightGrad";
    updates_on_cuda += op.op == "AdamUpdate";
  }
  CHECK(on_cuda > 0);
  CHECK(linear_on_cuda >= 2);  // both forward Linears at least (in every function that runs them)
  CHECK(updates_on_cuda >= 1);  // the weights' updates live where the weights do
}

TEST_CASE("recipe precision bf16 keeps the GEMMs on cuda, with their compute attribute", "[cuda]") {
  const Graph g = build_mlp();
  Recipe r = recipe("adamw");
  r.precision = "bf16";
  const ProgramSpec spec = cuda_spec(g, r);
  int bf16_gemms = 0;
  for (const OpSpec& op : spec.ops) {
    if (op.op != "Linear" && op.op != "LinearInputGrad" && op.op != "LinearWeightGrad") continue;
    INFO(op.op << " '" << op.name << "' on " << op.backend);
    CHECK(op.backend == "cuda");  // before, a bf16 GEMM fell back to the host, with copies around it
    auto d = SpecOpDesc::describe(spec, op, 0);
    REQUIRE(d.is_ok());
    params::MatMulParams p;
    REQUIRE(params::parse(d->desc(), &p).is_ok());
    bf16_gemms += p.bf16;
  }
  CHECK(bf16_gemms >= 3);  // the forward Linears and the gradients' GEMMs
}

TEST_CASE("an MLP trains on cuda as on cpu, step by step (SGD with momentum, AdamW, bf16 GEMMs)", "[cuda]") {
  if (skip_without_gpu()) return;
  struct Variant {
    const char* optimizer;
    const char* precision;
    double tolerance;
  };
  // bf16: both sides round the GEMM operands to bf16 and sum in f32, in another order, far under
  // bf16's own 4e-3; f32: only the order of the sums differs.
  for (const Variant v : {Variant{"sgd", "fp32", 1e-4}, Variant{"adamw", "fp32", 1e-4}, Variant{"adamw", "bf16", 1e-3}}) {
    INFO(v.optimizer << ", precision " << v.precision);
    const Graph g = build_mlp();
    Recipe r = recipe(v.optimizer);
    r.precision = v.precision;
    CompileOptions on_cuda;
    on_cuda.backend = "cuda";
    auto cpu_trainer = compile_trainer(g, r);
    auto cuda_trainer = compile_trainer(g, r, on_cuda);
    INFO(cuda_trainer.status().message());
    REQUIRE(cpu_trainer.is_ok());
    REQUIRE(cuda_trainer.is_ok());
    Engine& cpu = cpu_trainer->engine;
    Engine& gpu = cuda_trainer->engine;
    int bound = 0;
    for (const BackendInfo& b : gpu.backends()) bound += b.name == "cuda" ? b.ops_bound : 0;
    CHECK(bound > 0);
    train_side_by_side(cpu, gpu, v.tolerance);
    for (const char* name : {"fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"}) {
      const int64_t n = std::string(name).find("weight") != std::string::npos
                            ? (std::string(name) == "fc1.weight" ? kHidden * kFeatures : kClasses * kHidden)
                            : (std::string(name) == "fc1.bias" ? kHidden : kClasses);
      std::vector<float> a(static_cast<size_t>(n)), b(static_cast<size_t>(n));
      REQUIRE(cpu.get_parameter(name, a.data(), a.size() * sizeof(float)).is_ok());
      REQUIRE(gpu.get_parameter(name, b.data(), b.size() * sizeof(float)).is_ok());
      for (size_t i = 0; i < a.size(); ++i) {
        INFO(name << "[" << i << "]: cuda " << b[i] << ", cpu " << a[i]);
        CHECK(std::fabs(b[i] - a[i]) <= v.tolerance * (std::fabs(a[i]) + 1.0));
      }
    }
  }
}

TEST_CASE("pock_zero clears exactly the bytes asked for, in order with copies", "[cuda]") {
  if (skip_without_gpu()) return;
  Backend cuda;
  auto zero = reinterpret_cast<pock_zero_fn>(cuda.b.get_proc_address(cuda.b.context, POCK_EXT_ZERO));
  REQUIRE(zero != nullptr);
  const size_t n = 3 << 20, from = 1000003, count = (1 << 20) + 7;  // odd offsets and sizes
  std::vector<uint8_t> host(n);
  for (size_t i = 0; i < n; ++i) host[i] = static_cast<uint8_t>(1 + i % 251);  // never 0
  void* d = cuda.b.alloc(cuda.b.context, n, 64);
  REQUIRE(d != nullptr);
  REQUIRE(cuda.b.copy(cuda.b.context, d, host.data(), n, POCK_COPY_HOST_TO_DEVICE) == POCK_OK);
  REQUIRE(zero(cuda.b.context, static_cast<uint8_t*>(d) + from, count) == POCK_OK);
  std::vector<uint8_t> back(n, 0);
  REQUIRE(cuda.b.copy(cuda.b.context, back.data(), d, n, POCK_COPY_DEVICE_TO_HOST) == POCK_OK);
  cuda.b.free(cuda.b.context, d);
  size_t wrong = 0;
  for (size_t i = 0; i < n; ++i) wrong += back[i] != (i >= from && i < from + count ? 0 : host[i]);
  CHECK(wrong == 0);
}

TEST_CASE("cuBLAS is opened on demand, with every entry point the backend calls", "[cuda]") {
  // Linked, cuBLAS would cost every process that links the runtime about 210 MB at load.
  std::string why;
  const cuda::CublasApi* api = cuda::cublas_api(&why);
  INFO(why);
  REQUIRE(api != nullptr);
  CHECK(cuda::cublas_status_text(CUBLAS_STATUS_NOT_INITIALIZED).find("CUBLAS_STATUS_NOT_INITIALIZED") != std::string::npos);
}

TEST_CASE("steps replayed as CUDA graphs (the default) train as with POCK_CUDA_GRAPHS=0", "[cuda]") {
  if (skip_without_gpu()) return;
  const Graph g = build_mlp();
  const Recipe r = recipe("adamw");
  CompileOptions on_cuda;
  on_cuda.backend = "cuda";
  // The backend reads the switch when an engine opens it.
  REQUIRE(setenv("POCK_CUDA_GRAPHS", "0", 1) == 0);
  auto plain = compile_trainer(g, r, on_cuda);
  unsetenv("POCK_CUDA_GRAPHS");
  auto graphed = compile_trainer(g, r, on_cuda);
  INFO(graphed.status().message());
  REQUIRE(plain.is_ok());
  REQUIRE(graphed.is_ok());
  // From the second step on, runs replay as graphs: the same kernels, though cuBLAS may pick
  // another algorithm with the workspace capture needs.
  train_side_by_side(plain->engine, graphed->engine, 1e-6);
  std::vector<float> a(kHidden * kFeatures), b(a.size());
  REQUIRE(plain->engine.get_parameter("fc1.weight", a.data(), a.size() * sizeof(float)).is_ok());
  REQUIRE(graphed->engine.get_parameter("fc1.weight", b.data(), b.size() * sizeof(float)).is_ok());
  for (size_t i = 0; i < a.size(); ++i) CHECK(std::fabs(b[i] - a[i]) <= 1e-6 * (std::fabs(a[i]) + 1.0));
}
