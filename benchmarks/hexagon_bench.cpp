// The Hexagon plugin's costs, next to the CPU backend (docs/hexagon.md, benchmarks/RESULTS.md):
//   1. per-message overhead: one tiny op sent and synchronized — the round trip through the
//      control socket, the DSP's checks and dispatch;
//   2. the same with 64 tiny ops per message: what batching a segment saves;
//   3. emulated compute: Linear [rows, k] x [n, k]^T + b on the DSP (qemu-hexagon) and on the
//      "cpu" and "ref" backends, in MFLOP/s;
//   4. a train step of tests/train's MLP (Adam) with the plugin and on the CPU alone, and the
//      messages it sends.
// Ops are driven through their backend's pock_backend_v1, as the runtime does.
//   ninja -C build hexagon_bench && build/hexagon/hexagon_bench [repetitions]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <dlfcn.h>

#include "kernels/hexagon/pock_hexagon.h"
#include "pock/backend.h"
#include "runtime/backend_set.hpp"
#include "train/mlp_model.hpp"

namespace {

using Clock = std::chrono::steady_clock;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Buffers of one backend: its own memory when it has some, else the host's.
struct Buffers {
  pock_backend_v1& b;
  std::vector<void*> device;
  std::vector<std::vector<float>> host;
  explicit Buffers(pock_backend_v1& backend) : b(backend) {}
  ~Buffers() {
    for (void* p : device) b.free(b.context, p);
  }
  pock_tensor_desc tensor(std::vector<int64_t> dims, float fill) {
    pock_tensor_desc t{};
    t.dtype = POCK_F32;
    t.rank = static_cast<int32_t>(dims.size());
    size_t n = 1;
    for (size_t i = 0; i < dims.size(); ++i) {
      t.dims[i] = dims[i];
      n *= static_cast<size_t>(dims[i]);
    }
    t.nbytes = n * sizeof(float);
    std::vector<float> values(n);
    for (size_t i = 0; i < n; ++i) values[i] = fill * static_cast<float>((i * 37) % 101) / 101.0f - 0.25f;
    if (b.alloc) {
      t.data = b.alloc(b.context, t.nbytes, 64);
      if (!t.data) std::abort();
      device.push_back(t.data);
      t.memory_space = POCK_MEMORY_DEVICE;
      b.copy(b.context, t.data, values.data(), t.nbytes, POCK_COPY_HOST_TO_DEVICE);
    } else {
      host.push_back(std::move(values));
      t.data = host.back().data();
    }
    return t;
  }
  // An i8 tensor of values in [-127, 127].
  pock_tensor_desc int8_tensor(std::vector<int64_t> dims) {
    size_t n = 1;
    for (int64_t d : dims) n *= static_cast<size_t>(d);
    pock_tensor_desc t = tensor(std::move(dims), 0.0f);  // room for n floats: enough for n bytes
    std::vector<int8_t> values(n);
    for (size_t i = 0; i < n; ++i) values[i] = static_cast<int8_t>(static_cast<int>((i * 37) % 255) - 127);
    t.dtype = POCK_I8;
    t.nbytes = n;
    if (t.memory_space == POCK_MEMORY_DEVICE) b.copy(b.context, t.data, values.data(), n, POCK_COPY_HOST_TO_DEVICE);
    else std::memcpy(t.data, values.data(), n);
    return t;
  }
};

struct Op {
  pock_backend_v1& b;
  pock_op_desc desc{};
  std::vector<pock_tensor_desc> ins, outs;
  void* handle = nullptr;
  pock_synchronize_fn sync = nullptr;
  Op(pock_backend_v1& backend, const char* type, std::vector<pock_tensor_desc> in, std::vector<pock_tensor_desc> out)
      : b(backend), ins(std::move(in)), outs(std::move(out)) {
    desc.op = type;
    desc.name = type;
    desc.num_inputs = static_cast<int32_t>(ins.size());
    desc.num_outputs = static_cast<int32_t>(outs.size());
    desc.inputs = ins.data();
    desc.outputs = outs.data();
    desc.num_threads = 1;
    if (b.supports_op(b.context, &desc) <= 0 || b.prepare_op(b.context, &desc, &handle) != POCK_OK) {
      std::fprintf(stderr, "%s cannot run %s: %s\n", b.name, type, b.last_error(b.context));
      std::exit(1);
    }
    if (b.get_proc_address) sync = reinterpret_cast<pock_synchronize_fn>(b.get_proc_address(b.context, POCK_EXT_SYNCHRONIZE));
  }
  ~Op() {
    if (b.release_op) b.release_op(b.context, handle);
  }
  void execute() {
    if (b.execute_op(b.context, handle, &desc) != POCK_OK) std::abort();
  }
  void synchronize() {
    if (sync && sync(b.context) != POCK_OK) std::abort();
  }
};

// Seconds per call of `fn`, the median of `reps` timings of `inner` calls each.
template <typename Fn>
double seconds_per_call(int reps, int inner, Fn fn) {
  std::vector<double> t;
  fn();  // warm
  for (int r = 0; r < reps; ++r) {
    const auto begin = Clock::now();
    for (int i = 0; i < inner; ++i) fn();
    t.push_back(std::chrono::duration<double>(Clock::now() - begin).count() / inner);
  }
  return median(t);
}

void message_overhead(pock_backend_v1& dsp, int reps) {
  Buffers buf(dsp);
  const pock_tensor_desc x = buf.tensor({1}, 1.0f), y = buf.tensor({1}, 0.0f);
  Op relu(dsp, "Relu", {x}, {y});
  const double one = seconds_per_call(reps, 200, [&] {
    relu.execute();
    relu.synchronize();
  });
  const double batched = seconds_per_call(reps, 20, [&] {
    for (int i = 0; i < 64; ++i) relu.execute();
    relu.synchronize();
  });
  std::printf("per message, one 1-element Relu:        %8.1f us\n", one * 1e6);
  std::printf("per op, 64 such ops in one message:     %8.2f us  (the message: %.1f us)\n", batched / 64 * 1e6,
              batched * 1e6);
}

double linear_mflops(pock_backend_v1& b, int64_t rows, int64_t k, int64_t n, int reps) {
  Buffers buf(b);
  const pock_tensor_desc x = buf.tensor({rows, k}, 1.0f), w = buf.tensor({n, k}, 0.5f), bias = buf.tensor({n}, 0.1f);
  const pock_tensor_desc y = buf.tensor({rows, n}, 0.0f);
  Op linear(b, "Linear", {x, w, bias}, {y});
  const double s = seconds_per_call(reps, 1, [&] {
    linear.execute();
    linear.synchronize();
  });
  return 2.0 * static_cast<double>(rows * k * n) / s / 1e6;
}

// LinearInt8 (int8 weights, rows of x quantized on the fly), in "MOP/s": 2 rows k n a second.
double linear_int8_mops(pock_backend_v1& b, int64_t rows, int64_t k, int64_t n, int reps) {
  Buffers buf(b);
  const pock_tensor_desc x = buf.tensor({rows, k}, 1.0f), w = buf.int8_tensor({n, k}), scale = buf.tensor({n}, 0.01f);
  const pock_tensor_desc y = buf.tensor({rows, n}, 0.0f);
  Op linear(b, "LinearInt8", {x, w, scale}, {y});
  const double s = seconds_per_call(reps, 1, [&] {
    linear.execute();
    linear.synchronize();
  });
  return 2.0 * static_cast<double>(rows * k * n) / s / 1e6;
}

// Milliseconds per train step of the MLP, compiled and opened with `plugins`.
double mlp_step_ms(const std::vector<std::string>& plugins, int reps) {
  using namespace pock;
  CompileOptions options;
  EngineConfig config;
  options.backend_plugins = config.backend_plugins = plugins;
  config.num_threads = 1;
  const Recipe recipe = test::classifier_recipe();
  auto blob = compile(test::build_mlp(), &recipe, options);
  if (!blob.is_ok()) std::abort();
  auto engine = Engine::open_buffer(blob->data(), blob->size(), config);
  if (!engine.is_ok()) std::abort();
  int index = 0;
  return 1e3 * seconds_per_call(reps, 50, [&] {
    if (!test::feed(*engine, test::make_batch(index++ % 8)).is_ok() || !engine->train_step().is_ok()) std::abort();
  });
}

void mlp_steps(const std::string& plugin, int reps) {
  const double cpu = mlp_step_ms({}, reps);
  const double dsp = mlp_step_ms({plugin}, reps);
  std::printf("\nMLP train step (16x4 -> 16 -> 3, Adam): cpu %.3f ms, with the DSP %.3f ms", cpu, dsp);
  // The engine above is closed; count one more step's messages on a fresh one.
  pock::CompileOptions options;
  pock::EngineConfig config;
  options.backend_plugins = config.backend_plugins = {plugin};
  const pock::Recipe recipe = pock::test::classifier_recipe();
  auto blob = pock::compile(pock::test::build_mlp(), &recipe, options);
  auto engine = pock::Engine::open_buffer(blob->data(), blob->size(), config);
  void* lib = dlopen(plugin.c_str(), RTLD_NOW | RTLD_NOLOAD);
  auto counters = reinterpret_cast<pock_hexagon_process_counters_fn>(dlsym(lib, POCK_HEXAGON_PROCESS_COUNTERS));
  pock_hexagon_counters before{}, after{};
  counters(&before);
  if (!pock::test::feed(*engine, pock::test::make_batch(0)).is_ok() || !engine->train_step().is_ok()) std::abort();
  counters(&after);
  dlclose(lib);
  std::printf(" (%llu messages, %llu DSP ops per step)\n", static_cast<unsigned long long>(after.messages - before.messages),
              static_cast<unsigned long long>(after.ops_run - before.ops_run));
}

}  // namespace

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::max(1, std::atoi(argv[1])) : 5;
  const std::string plugin = POCK_HEXAGON_PLUGIN_PATH;
  pock::BackendSet set = pock::BackendSet::open({plugin});
  pock_backend_v1* dsp = set.find("hexagon");
  pock_backend_v1* cpu = set.find("cpu");
  pock_backend_v1* ref = set.find("ref");
  if (!dsp || !cpu || !ref) {
    for (const auto& e : set.entries()) std::fprintf(stderr, "%s: %s\n", e.name.c_str(), e.status.message().c_str());
    return 1;
  }
  std::printf("hexagon_bench: medians of %d repetitions\n", reps);
  message_overhead(*dsp, reps);
  std::printf("\nLinear [rows, k] x [n, k]^T + b, MFLOP/s (one thread):\n");
  std::printf("%18s %12s %12s %12s %10s\n", "rows x k x n", "hexagon", "cpu", "ref", "cpu/dsp");
  const int64_t shapes[][3] = {{16, 4, 16}, {64, 64, 64}, {64, 256, 256}};
  for (const auto& s : shapes) {
    const double d = linear_mflops(*dsp, s[0], s[1], s[2], reps);
    const double c = linear_mflops(*cpu, s[0], s[1], s[2], reps);
    const double r = linear_mflops(*ref, s[0], s[1], s[2], reps);
    char shape[64];
    std::snprintf(shape, sizeof shape, "%ldx%ldx%ld", static_cast<long>(s[0]), static_cast<long>(s[1]), static_cast<long>(s[2]));
    std::printf("%18s %12.1f %12.1f %12.1f %10.1f\n", shape, d, c, r, c / d);
  }
  std::printf("\nLinearInt8 (int8 weight, int8 products; HVX vrmpy on the DSP) next to f32 Linear on the DSP, MOP/s:\n");
  std::printf("%18s %12s %12s %12s %10s\n", "rows x k x n", "dsp int8", "dsp f32", "ref int8", "int8/f32");
  for (const auto& s : shapes) {
    const double i8 = linear_int8_mops(*dsp, s[0], s[1], s[2], reps);
    const double f = linear_mflops(*dsp, s[0], s[1], s[2], reps);
    const double r = linear_int8_mops(*ref, s[0], s[1], s[2], reps);
    char shape[64];
    std::snprintf(shape, sizeof shape, "%ldx%ldx%ld", static_cast<long>(s[0]), static_cast<long>(s[1]), static_cast<long>(s[2]));
    std::printf("%18s %12.1f %12.1f %12.1f %10.1f\n", shape, i8, f, r, i8 / f);
  }
  mlp_steps(plugin, reps);
  return 0;
}
