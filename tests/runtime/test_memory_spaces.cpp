// Memory spaces, end to end (docs/backend-abi.md): a CNN and a transformer trained with about half
// of their ops on the test device — whose memory the host cannot touch outside copy() — equal a
// ref-only run step by step, full BP and sparse; each step copies exactly what the plan
// scheduled and allocates nothing; parameters and checkpoints reach device memory through copy;
// a device that dies mid-step leaves the weights of the last good step and training goes on on the
// host; the blob opened without the device trains the same; after each step the device checks its
// parameters for NaN/Inf in one call (or one per parameter, without the batched extension), and a
// NaN it finds fails the step with the parameter's name and rolls it back in device memory.
#include <catch2/catch.hpp>

#include <dlfcn.h>

#include <cmath>
#include <cstdio>
#include <functional>
#include <string>

#include "blob/reader.hpp"
#include "pock/backend.h"
#include "pock/engine.hpp"
#include "support/counting_new.hpp"
#include "tests/runtime/test_device/test_device.h"
#include "train/sparse_models.hpp"

using namespace pock;
using namespace pock::test;

namespace {

const std::string kDevice = POCK_TEST_DEVICE_PLUGIN;

// The device's counters and fault hook, from the library an open engine loaded.
struct DeviceHooks {
  test_device_counters_fn counters = nullptr;
  test_device_fail_after_fn fail_after = nullptr;
  test_device_poison_after_fn poison_after = nullptr;
  test_device_counts read() const {
    test_device_counts c{};
    counters(&c);
    return c;
  }
};

DeviceHooks device_hooks() {
  void* library = dlopen(kDevice.c_str(), RTLD_NOW | RTLD_NOLOAD);
  REQUIRE(library != nullptr);
  DeviceHooks hooks;
  hooks.counters = reinterpret_cast<test_device_counters_fn>(dlsym(library, TEST_DEVICE_COUNTERS));
  hooks.fail_after = reinterpret_cast<test_device_fail_after_fn>(dlsym(library, TEST_DEVICE_FAIL_AFTER));
  hooks.poison_after = reinterpret_cast<test_device_poison_after_fn>(dlsym(library, TEST_DEVICE_POISON_AFTER));
  dlclose(library);  // the engine keeps it loaded
  REQUIRE(hooks.counters != nullptr);
  REQUIRE(hooks.fail_after != nullptr);
  REQUIRE(hooks.poison_after != nullptr);
  return hooks;
}

constexpr int32_t kBothChecks =
    TEST_DEVICE_OFFERS_ALL_FINITE | TEST_DEVICE_OFFERS_ALL_FINITE_MANY | TEST_DEVICE_OFFERS_ZERO;

// While it lives, the device offers only `extensions` of the two all-finite ones to the engines
// that open it. It holds the library loaded, so that the setting outlives the compiler's load and
// unload of the plugin and reaches the engine's.
class OfferedChecks {
 public:
  explicit OfferedChecks(int32_t extensions) {
    library_ = dlopen(kDevice.c_str(), RTLD_NOW | RTLD_LOCAL);
    REQUIRE(library_ != nullptr);
    offer_ = reinterpret_cast<test_device_offer_fn>(dlsym(library_, TEST_DEVICE_OFFER));
    REQUIRE(offer_ != nullptr);
    offer_(extensions);
  }
  ~OfferedChecks() {
    offer_(TEST_DEVICE_OFFERS_EVERYTHING);
    dlclose(library_);
  }
  OfferedChecks(const OfferedChecks&) = delete;
  OfferedChecks& operator=(const OfferedChecks&) = delete;

 private:
  void* library_ = nullptr;
  test_device_offer_fn offer_ = nullptr;
};

// One workload: a model, a recipe, its batches.
struct Workload {
  std::string name;
  std::function<Result<Graph>()> build;
  Recipe recipe;
  std::function<Status(Engine&, int step)> feed;
};

// SGD with momentum: Adam would turn float-rounding differences in near-zero gradients (a bias
// before a BatchNorm) into visible weight differences; the device path is exercised the same.
Recipe sgd(std::vector<TrainableRule> rules) {
  Recipe r;
  r.loss.logits = "logits";
  r.optimizer.type = "sgd";
  r.optimizer.lr = 0.05;
  r.optimizer.momentum = 0.9;
  r.trainable = std::move(rules);
  return r;
}

std::vector<Workload> workloads() {
  auto cnn_feed = [](Engine& e, int step) {
    const CnnBatch b = make_cnn_batch(static_cast<uint32_t>(step + 1));
    POCK_RETURN_IF_ERROR(e.set_input("image", b.image));
    return e.set_input("label", b.label);
  };
  auto token_feed = [](Engine& e, int step) {
    const TokenBatch b = make_token_batch(static_cast<uint32_t>(step + 1));
    POCK_RETURN_IF_ERROR(e.set_input("tokens", b.tokens));
    return e.set_input("label", b.label);
  };
  return {
      {"cnn full", build_sparse_cnn, sgd({}), cnn_feed},
      {"cnn sparse (last 2 layers)", build_sparse_cnn, sgd({rule_layers("last:2")}), cnn_feed},
      {"transformer full", build_sparse_transformer, sgd({}), token_feed},
      {"transformer sparse (qkv + fc1 of the last block)", build_sparse_transformer,
       sgd({rule_match("model.layers.1.self_attn.q_proj.*"), rule_match("model.layers.1.self_attn.k_proj.*"),
            rule_match("model.layers.1.self_attn.v_proj.*"), rule_match("model.layers.1.mlp.fc1.*")}), token_feed},
  };
}

struct Trainer {
  std::vector<uint8_t> blob;
  Result<Engine> engine = Status(Code::kInternal, "not opened");
};

// On the device: compiled and opened with the test device plugin. Reference: ref kernels, host
// memory, no plugin — an independent path to the same numbers.
Trainer open(const Workload& w, bool device, bool load_plugin_at_run = true) {
  Trainer t;
  auto graph = w.build();
  REQUIRE(graph.is_ok());
  CompileOptions options;
  EngineConfig config;
  if (device) {
    options.backend_plugins = {kDevice};
    if (load_plugin_at_run) config.backend_plugins = {kDevice};
  } else {
    options.backend = config.backend = "ref";
  }
  auto blob = compile(*graph, &w.recipe, options);
  INFO(blob.status().message());
  REQUIRE(blob.is_ok());
  t.blob = std::move(blob.value());
  t.engine = Engine::open_buffer(t.blob.data(), t.blob.size(), config);
  INFO(t.engine.status().message());
  REQUIRE(t.engine.is_ok());
  return t;
}

ProgramSpec spec_of(const std::vector<uint8_t>& blob) {
  BlobView view;
  REQUIRE(open_blob(blob.data(), blob.size(), VerifyOptions{}, &view).is_ok());
  auto spec = read_program_spec(view, false);
  REQUIRE(spec.is_ok());
  return std::move(spec.value());
}

int64_t copies_in(const ProgramSpec& spec, const std::string& function) {
  int64_t n = 0;
  for (const FunctionSpec& f : spec.functions) {
    if (f.name != function) continue;
    for (uint32_t op : f.ops) n += spec.ops[op].op == "Copy";
  }
  return n;
}

std::vector<std::string> trainable_names(const ProgramSpec& spec) {
  std::vector<std::string> out;
  for (const TensorSpec& t : spec.tensors) {
    if (t.trainable) out.push_back(t.name);
  }
  return out;
}

std::vector<float> parameter(Engine& e, const std::string& name) {
  auto v = read_floats(e, name, true);
  REQUIRE(v.is_ok());
  return std::move(v.value());
}

double relative_difference(const std::vector<float>& a, const std::vector<float>& b) {
  REQUIRE(a.size() == b.size());
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    worst = std::max(worst, std::fabs(static_cast<double>(a[i]) - b[i]) / std::max(1.0, std::fabs(static_cast<double>(b[i]))));
  }
  return worst;
}

float step(Engine& e, const Workload& w, int index) {
  REQUIRE(w.feed(e, index).is_ok());
  auto loss = e.train_step();
  INFO(loss.status().message());
  REQUIRE(loss.is_ok());
  return *loss;
}

}  // namespace

TEST_CASE("models trained half on a device equal the ref-only run, step by step", "[runtime][memory_spaces]") {
  constexpr int kSteps = 6;
  for (const Workload& w : workloads()) {
    SECTION(w.name) {
      Trainer device = open(w, true);
      Trainer reference = open(w, false);
      const ProgramSpec spec = spec_of(device.blob);
      REQUIRE(spec.spaces.size() == 1);
      CHECK(spec.spaces[0].backend == "testdev");

      // About half of the ops (the Copy ops aside) run on the device.
      int64_t on_device = 0, kernels = 0;
      for (const OpSpec& op : spec.ops) {
        if (op.op == "Copy") continue;
        ++kernels;
        on_device += op.backend == "testdev";
      }
      const double share = static_cast<double>(on_device) / static_cast<double>(kernels);
      INFO(on_device << " of " << kernels << " ops on the device");
      CHECK(share >= 0.3);
      CHECK(share <= 0.7);
      int bound = 0;
      for (const BackendInfo& b : device.engine->backends()) bound += b.name == "testdev" ? b.ops_bound : 0;
      CHECK(bound == on_device);

      const DeviceHooks hooks = device_hooks();
      const int64_t planned = copies_in(spec, "train");
      REQUIRE(planned > 0);
      for (int s = 0; s < kSteps; ++s) {
        const test_device_counts before = hooks.read();
        const float got = step(*device.engine, w, s);
        const test_device_counts after = hooks.read();
        const float want = step(*reference.engine, w, s);
        INFO("step " << s);
        CHECK(std::fabs(got - want) <= 1e-5f * std::max(1.0f, std::fabs(want)));
        // What crossed between host and device is what the plan scheduled, nothing more; the
        // rollback snapshot stays in device memory (device-to-device copies).
        CHECK(after.copies[POCK_COPY_HOST_TO_DEVICE] + after.copies[POCK_COPY_DEVICE_TO_HOST] -
                  before.copies[POCK_COPY_HOST_TO_DEVICE] - before.copies[POCK_COPY_DEVICE_TO_HOST] ==
              planned);
        CHECK(after.allocs == before.allocs);
        CHECK(after.frees == before.frees);
        CHECK(after.executes > before.executes);
      }
      for (const std::string& name : trainable_names(spec)) {
        INFO(name);
        CHECK(relative_difference(parameter(*device.engine, name), parameter(*reference.engine, name)) <= 1e-5);
      }
    }
  }
}

TEST_CASE("parameters and checkpoints reach device memory through copy", "[runtime][memory_spaces]") {
  const Workload w = workloads()[2];
  Trainer device = open(w, true);
  const ProgramSpec spec = spec_of(device.blob);
  const std::vector<std::string> names = trainable_names(spec);
  int on_device = 0;
  for (const TensorSpec& t : spec.tensors) on_device += t.trainable && t.space == 1;
  REQUIRE(on_device > 0);
  for (int s = 0; s < 3; ++s) step(*device.engine, w, s);
  const std::string path = "test_memory_spaces.ckpt";
  REQUIRE(device.engine->save_checkpoint(path).is_ok());
  std::vector<std::vector<float>> saved;
  for (const std::string& n : names) saved.push_back(parameter(*device.engine, n));
  const float next = step(*device.engine, w, 3);

  // set_parameter writes device memory; a checkpoint puts every parameter back.
  std::vector<float> zeros(saved[0].size(), 0.0f);
  REQUIRE(device.engine->set_parameter(names[0], zeros.data(), zeros.size() * sizeof(float)).is_ok());
  CHECK(parameter(*device.engine, names[0]) == zeros);
  REQUIRE(device.engine->load_checkpoint(path).is_ok());
  for (size_t i = 0; i < names.size(); ++i) CHECK(parameter(*device.engine, names[i]) == saved[i]);
  CHECK(step(*device.engine, w, 3) == next);  // the same step from the same state: the same loss
  std::remove(path.c_str());
}

TEST_CASE("a device that dies mid-step leaves the last good weights and training goes on on the host",
          "[runtime][memory_spaces]") {
  for (const Workload& w : {workloads()[0], workloads()[2]}) {
    SECTION(w.name) {
      Trainer device = open(w, true);
      Trainer reference = open(w, false);
      const std::vector<std::string> names = trainable_names(spec_of(device.blob));
      for (int s = 0; s < 2; ++s) {
        step(*device.engine, w, s);
        step(*reference.engine, w, s);
      }
      std::vector<std::vector<float>> good;
      for (const std::string& n : names) good.push_back(parameter(*device.engine, n));

      device_hooks().fail_after(3);  // dies at its third execute of the next step
      REQUIRE(w.feed(*device.engine, 2).is_ok());
      auto failed = device.engine->train_step();
      REQUIRE(!failed.is_ok());
      CHECK(failed.status().code() == Code::kBackend);
      CHECK(failed.status().message().find("the test device died") != std::string::npos);
      CHECK(failed.status().message().find("dropped") != std::string::npos);
      CHECK(device.engine->step() == 2);
      for (size_t i = 0; i < names.size(); ++i) {
        INFO(names[i]);
        CHECK(parameter(*device.engine, names[i]) == good[i]);  // exactly the last good step's
      }
      bool reported = false;
      for (const BackendInfo& b : device.engine->backends()) {
        if (b.name == "testdev") reported = !b.status.is_ok() && b.ops_bound == 0;
      }
      CHECK(reported);

      // The same batch again, now on the host, and on: the run follows the reference.
      for (int s = 2; s < 5; ++s) {
        const float got = step(*device.engine, w, s);
        const float want = step(*reference.engine, w, s);
        CHECK(std::fabs(got - want) <= 1e-5f * std::max(1.0f, std::fabs(want)));
      }
    }
  }
}

TEST_CASE("a blob compiled for the device trains the same without it", "[runtime][memory_spaces]") {
  for (const Workload& w : {workloads()[1], workloads()[3]}) {
    SECTION(w.name) {
      Trainer fallback = open(w, true, /*load_plugin_at_run=*/false);
      Trainer reference = open(w, false);
      for (const BackendInfo& b : fallback.engine->backends()) CHECK(b.name != "testdev");
      for (int s = 0; s < 4; ++s) {
        const float got = step(*fallback.engine, w, s);
        const float want = step(*reference.engine, w, s);
        CHECK(std::fabs(got - want) <= 1e-5f * std::max(1.0f, std::fabs(want)));
      }
    }
  }
}

TEST_CASE("a device space is zeroed at open by one pock_zero call (by copies of zeros without it)",
          "[runtime][memory_spaces]") {
  // The test device's fresh memory is NaN, so momentum that was not zeroed would show in the loss.
  const Workload w = workloads()[2];
  std::vector<float> losses[2];
  for (const bool offered : {true, false}) {
    INFO((offered ? "pock_zero offered" : "copies of zeros"));
    const OfferedChecks checks(offered ? kBothChecks : TEST_DEVICE_OFFERS_ALL_FINITE_MANY);
    const DeviceHooks hooks = device_hooks();
    const test_device_counts before = hooks.read();
    Trainer device = open(w, true);
    const test_device_counts after = hooks.read();
    const ProgramSpec spec = spec_of(device.blob);
    REQUIRE(spec.spaces.size() == 1);  // the device's (the host's is implicit)
    const int64_t persistent = static_cast<int64_t>(spec.spaces[0].persistent_bytes);
    REQUIRE(persistent > 0);
    const int64_t zero_calls = after.zero_calls - before.zero_calls;
    const int64_t uploads = after.copies[POCK_COPY_HOST_TO_DEVICE] - before.copies[POCK_COPY_HOST_TO_DEVICE];
    if (offered) {
      CHECK(zero_calls == 1);
      CHECK(after.zero_bytes - before.zero_bytes == persistent);
    } else {
      CHECK(zero_calls == 0);
      CHECK(uploads >= (persistent + 16383) / 16384);  // the zeros, before the initial values
    }
    for (int s = 0; s < 3; ++s) losses[offered ? 0 : 1].push_back(step(*device.engine, w, s));
  }
  CHECK(losses[0] == losses[1]);
  for (float loss : losses[0]) CHECK(std::isfinite(loss));
}

TEST_CASE("after a step the device checks its parameters in one call, and a NaN there rolls the step back",
          "[runtime][memory_spaces]") {
  struct Mode {
    const char* name;
    int32_t offered;
  };
  for (const Workload& w : {workloads()[0], workloads()[2]}) {
    for (const Mode mode : {Mode{"batched", kBothChecks}, Mode{"per parameter", TEST_DEVICE_OFFERS_ALL_FINITE},
                            Mode{"neither: the loss check alone", 0}}) {
      SECTION(w.name + ", " + mode.name) {
        const OfferedChecks offered(mode.offered);
        Trainer device = open(w, true);
        Trainer reference = open(w, false);
        const ProgramSpec spec = spec_of(device.blob);
        const std::vector<std::string> names = trainable_names(spec);
        int64_t on_device = 0;
        for (const TensorSpec& t : spec.tensors) on_device += t.trainable && t.space == 1 && t.dtype == DType::kF32;
        REQUIRE(on_device > 1);

        // Calls per step: one in all (batched), one per device parameter, or none; and after the
        // first step, no allocation on the host (the lists were made at open).
        const DeviceHooks hooks = device_hooks();
        for (int s = 0; s < 2; ++s) {
          REQUIRE(w.feed(*device.engine, s).is_ok());
          const test_device_counts before = hooks.read();
          Result<float> loss = 0.0f;
          const long allocations = allocations_during([&] { loss = device.engine->train_step(); });
          const test_device_counts after = hooks.read();
          INFO(loss.status().message());
          REQUIRE(loss.is_ok());
          if (s > 0) CHECK(allocations == 0);
          step(*reference.engine, w, s);
          const int64_t many = after.all_finite_many_calls - before.all_finite_many_calls;
          const int64_t one = after.all_finite_calls - before.all_finite_calls;
          INFO(many << " batched and " << one << " per-parameter calls in step " << s);
          CHECK(many == (mode.offered == kBothChecks ? 1 : 0));
          CHECK(after.all_finite_many_buffers - before.all_finite_many_buffers == (mode.offered == kBothChecks ? on_device : 0));
          CHECK(one == (mode.offered == TEST_DEVICE_OFFERS_ALL_FINITE ? on_device : 0));
        }
        std::vector<std::vector<float>> good;
        for (const std::string& n : names) good.push_back(parameter(*device.engine, n));

        // The device's update of one of its parameters overflows.
        std::string update, poisoned;
        for (const OpSpec& op : spec.ops) {
          if (op.op == "SgdUpdate" && op.backend == "testdev" && update.empty()) {
            update = op.name;
            poisoned = spec.tensors[static_cast<size_t>(op.inputs[0])].name;
          }
        }
        REQUIRE(!update.empty());
        INFO("NaN in '" << poisoned << "' after '" << update << "'");
        hooks.poison_after(update.c_str());
        REQUIRE(w.feed(*device.engine, 2).is_ok());
        auto poisoned_step = device.engine->train_step();
        if (mode.offered == 0) {
          CHECK(poisoned_step.is_ok());  // nothing looked at the device's parameters
          CHECK(std::isnan(parameter(*device.engine, poisoned)[0]));
          continue;
        }
        REQUIRE(!poisoned_step.is_ok());
        CHECK(poisoned_step.status().code() == Code::kNumerical);
        CHECK_THAT(poisoned_step.status().message(), Catch::Contains("parameter '" + poisoned + "' became NaN or Inf"));
        CHECK_THAT(poisoned_step.status().message(), Catch::Contains("as before the step"));
        CHECK(device.engine->step() == 2);
        for (size_t i = 0; i < names.size(); ++i) {
          INFO(names[i]);
          CHECK(parameter(*device.engine, names[i]) == good[i]);  // exactly the last good step's
        }
        // The device stays, and the same batch again follows the reference.
        for (const BackendInfo& b : device.engine->backends()) {
          if (b.name == "testdev") CHECK((b.status.is_ok() && b.ops_bound > 0));
        }
        for (int s = 2; s < 4; ++s) {
          const float got = step(*device.engine, w, s);
          const float want = step(*reference.engine, w, s);
          CHECK(std::fabs(got - want) <= 1e-5f * std::max(1.0f, std::fabs(want)));
        }
      }
    }
  }
}
