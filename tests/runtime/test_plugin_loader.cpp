// The plugin loader (src/runtime/plugin_loader.cpp): a plugin that cannot be used is reported —
// which library, and why — through the C API, and the engine still opens and trains on the
// backends that did load. A working plugin is bound where it claims ops; a blob compiled with it
// falls back per op when it is absent.
#include <catch2/catch.hpp>

#include <dlfcn.h>

#include <cstdlib>
#include <string>

#include "pock/engine.hpp"
#include "train/mlp_model.hpp"

using namespace pock;
using namespace pock::test;

namespace {

std::string plugin_path(const std::string& name) { return std::string(POCK_TEST_PLUGIN_DIR) + "/lib" + name + ".so"; }

struct Opened {
  std::vector<uint8_t> blob;
  Result<Engine> engine = Status(Code::kInternal, "not opened");
};

Opened open_mlp(const std::vector<std::string>& plugins, const CompileOptions& options = {}) {
  Opened out;
  const Recipe recipe = classifier_recipe();
  auto blob = compile(build_mlp(), &recipe, options);
  REQUIRE(blob.is_ok());
  out.blob = std::move(blob.value());
  EngineConfig config;
  config.backend_plugins = plugins;
  out.engine = Engine::open_buffer(out.blob.data(), out.blob.size(), config);
  return out;
}

std::vector<float> train(Engine& e, int steps) {
  std::vector<float> losses;
  for (int s = 0; s < steps; ++s) {
    REQUIRE(feed(e, make_batch(s)).is_ok());
    auto loss = e.train_step();
    REQUIRE(loss.is_ok());
    losses.push_back(*loss);
  }
  return losses;
}

const BackendInfo* find_backend(const std::vector<BackendInfo>& list, const std::string& name) {
  for (const BackendInfo& b : list) {
    if (b.name == name) return &b;
  }
  return nullptr;
}

}  // namespace

TEST_CASE("a plugin that cannot be used is reported and the engine trains on the others", "[runtime][plugins]") {
  struct Case {
    std::string entry;
    std::string reason;
  };
  const std::vector<Case> cases = {
      {plugin_path("pock_test_plugin_wrong_abi"), "backend ABI version 99; this runtime implements version 1"},
      {plugin_path("pock_test_plugin_init_fails"), "pock_backend_init_v1 failed (internal error)"},
      {plugin_path("pock_test_plugin_no_symbol"), "does not export pock_backend_init_v1"},
      {plugin_path("pock_test_plugin_missing_members"), "leaves a required member NULL"},
      {plugin_path("pock_test_plugin_partial_memory"), "sets only some of alloc, free and copy"},
      {plugin_path("pock_test_plugin_named_cpu"), "is named 'cpu', which another backend of this engine already is"},
      {"/nonexistent/libpock_nothing.so", "cannot be loaded"},
      {"", "backend plugin entry is empty"},
  };
  Opened reference = open_mlp({});
  REQUIRE(reference.engine.is_ok());
  const std::vector<float> want = train(*reference.engine, 4);
  for (const Case& c : cases) {
    INFO(c.entry);
    Opened o = open_mlp({c.entry});
    REQUIRE(o.engine.is_ok());
    const std::vector<BackendInfo> backends = o.engine->backends();
    REQUIRE(!backends.empty());
    const BackendInfo& failed = backends.back();  // plugins come after the built-ins
    INFO(failed.status.message());
    CHECK(failed.status.code() == Code::kBackend);
    CHECK(failed.status.message().find(c.reason) != std::string::npos);
    CHECK(failed.status.message().find(c.entry) != std::string::npos);  // names the library
    CHECK(failed.ops_bound == 0);
    CHECK(train(*o.engine, 4) == want);
  }
}

TEST_CASE("the C API reports each backend with its status", "[runtime][plugins]") {
  const Recipe recipe = classifier_recipe();
  auto blob = compile(build_mlp(), &recipe);
  REQUIRE(blob.is_ok());
  const std::string bad = plugin_path("pock_test_plugin_init_fails");
  const char* plugins[] = {bad.c_str(), nullptr};
  pock_engine_options options;
  pock_engine_options_init(&options);
  options.backend_plugins = plugins;
  pock_engine* e = nullptr;
  REQUIRE(pock_engine_open_buffer(blob->data(), blob->size(), &options, &e) == POCK_OK);
  const int32_t n = pock_engine_backend_count(e);
  REQUIRE(n >= 3);  // cpu, ref, the plugin
  pock_backend_info info{};
  info.struct_size = sizeof info;
  REQUIRE(pock_engine_backend_info(e, n - 1, &info) == POCK_OK);
  CHECK(info.status == POCK_ERR_BACKEND);
  CHECK(std::string(info.library) == bad);
  CHECK(std::string(info.message).find("init") != std::string::npos);
  REQUIRE(pock_engine_backend_info(e, 0, &info) == POCK_OK);
  CHECK(info.status == POCK_OK);
  CHECK(std::string(info.library).empty());  // a built-in
  CHECK(pock_engine_backend_info(e, n, &info) == POCK_ERR_NOT_FOUND);
  pock_backend_info too_small{};
  too_small.struct_size = 4;
  CHECK(pock_engine_backend_info(e, 0, &too_small) == POCK_ERR_INVALID_ARGUMENT);
  pock_engine_close(e);
}

TEST_CASE("a bare plugin name is found through POCK_BACKEND_PATH", "[runtime][plugins]") {
  REQUIRE(setenv("POCK_BACKEND_PATH", (std::string("/nonexistent:") + POCK_TEST_PLUGIN_DIR).c_str(), 1) == 0);
  Opened o = open_mlp({"libpock_test_relu_plugin.so"});
  unsetenv("POCK_BACKEND_PATH");
  REQUIRE(o.engine.is_ok());
  const std::vector<BackendInfo> backends = o.engine->backends();
  const BackendInfo* relu = find_backend(backends, "relu_counting");
  REQUIRE(relu != nullptr);
  CHECK(relu->status.is_ok());
  CHECK(relu->library == plugin_path("pock_test_relu_plugin"));
}

TEST_CASE("a working plugin runs the ops it claims, and a blob compiled with it falls back without it",
          "[runtime][plugins]") {
  const std::string path = plugin_path("pock_test_relu_plugin");
  // Unoptimized, so that Relu stays an op of its own (fusion would fold it into the Linear).
  CompileOptions unfused;
  unfused.optimize = false;
  CompileOptions with_plugin = unfused;
  with_plugin.backend_plugins = {path};
  Opened on_plugin = open_mlp({path}, with_plugin);
  REQUIRE(on_plugin.engine.is_ok());
  const std::vector<BackendInfo> backends = on_plugin.engine->backends();
  const BackendInfo* relu = find_backend(backends, "relu_counting");
  REQUIRE(relu != nullptr);
  CHECK(relu->ops_bound == 3);  // the forward Relu of the infer, train and eval functions

  // The same blob, opened without its plugin: every op binds to a built-in backend.
  EngineConfig plain;
  auto fallback = Engine::open_buffer(on_plugin.blob.data(), on_plugin.blob.size(), plain);
  REQUIRE(fallback.is_ok());
  const std::vector<BackendInfo> without = fallback->backends();
  CHECK(find_backend(without, "relu_counting") == nullptr);

  Opened reference = open_mlp({}, unfused);
  REQUIRE(reference.engine.is_ok());
  const std::vector<float> want = train(*reference.engine, 5);
  CHECK(train(*on_plugin.engine, 5) == want);
  // The plugin's own count of what it ran (the library the engine loaded, found again by path).
  void* library = dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD);
  REQUIRE(library != nullptr);
  auto executed = reinterpret_cast<long (*)()>(dlsym(library, "pock_test_relu_executed"));
  REQUIRE(executed != nullptr);
  CHECK(executed() == 5);  // one forward Relu per step
  dlclose(library);  // Relu is exact: the same bits on any backend
  CHECK(train(*fallback, 5) == want);
}

TEST_CASE("the compiler refuses a plugin it cannot load", "[runtime][plugins]") {
  CompileOptions options;
  options.backend_plugins = {plugin_path("pock_test_plugin_wrong_abi")};
  const Recipe recipe = classifier_recipe();
  auto blob = compile(build_mlp(), &recipe, options);
  REQUIRE(!blob.is_ok());
  CHECK(blob.status().code() == Code::kBackend);
  CHECK(blob.status().message().find("version 99") != std::string::npos);
}
