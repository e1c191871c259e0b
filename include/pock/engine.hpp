// Thin RAII C++ layer over the C API (pock.h): same core, same errors, as pock::Status values.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "pock/pock.h"
#include "pock/status.hpp"

namespace pock {

struct EngineConfig {
  int num_threads = 0;             // 0: one per core
  bool rollback_on_failure = true; // a failed train step restores the weights
  std::string backend;             // preferred backend; empty: as the blob says
  std::vector<std::string> backend_plugins;  // plugin libraries to load (see pock_engine_options)
  uint64_t memory_budget_bytes = 0;  // open refuses a larger plan (see pock_engine_options); 0: none
};

// One backend of an open engine (pock_backend_info, with owned strings).
struct BackendInfo {
  std::string name, library;
  Status status;  // ok: usable
  int ops_bound = 0;
  bool own_memory = false;
};

class Engine {
 public:
  using Options = EngineConfig;

  static Result<Engine> open(const std::string& path, const Options& options) {
    return open_with([&](const pock_engine_options* o, pock_engine** e) { return pock_engine_open_file(path.c_str(), o, e); }, options);
  }
  static Result<Engine> open(const std::string& path) { return open(path, Options{}); }
  // `data` must outlive the engine.
  static Result<Engine> open_buffer(const void* data, size_t size, const Options& options = Options{}) {
    return open_with([&](const pock_engine_options* o, pock_engine** e) { return pock_engine_open_buffer(data, size, o, e); }, options);
  }

  Engine(Engine&& other) noexcept : e_(std::exchange(other.e_, nullptr)) {}
  Engine& operator=(Engine&& other) noexcept {
    std::swap(e_, other.e_);
    return *this;
  }
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;
  ~Engine() { pock_engine_close(e_); }

  Status set_input(const std::string& name, const void* data, size_t nbytes) {
    return wrap(pock_engine_set_input(e_, name.c_str(), data, nbytes));
  }
  template <typename T>
  Status set_input(const std::string& name, const std::vector<T>& values) {
    return set_input(name, values.data(), values.size() * sizeof(T));
  }
  Status get_output(const std::string& name, void* data, size_t nbytes) {
    return wrap(pock_engine_get_output(e_, name.c_str(), data, nbytes));
  }
  template <typename T>
  Result<std::vector<T>> output(const std::string& name) {
    pock_tensor_info info{};
    POCK_RETURN_IF_ERROR(wrap(pock_engine_tensor_info(e_, name.c_str(), &info)));
    std::vector<T> out(info.nbytes / sizeof(T));
    POCK_RETURN_IF_ERROR(get_output(name, out.data(), info.nbytes));
    return out;
  }
  Result<pock_tensor_info> info(const std::string& name) {
    pock_tensor_info info{};
    POCK_RETURN_IF_ERROR(wrap(pock_engine_tensor_info(e_, name.c_str(), &info)));
    return info;
  }
  Status infer() { return wrap(pock_engine_infer(e_)); }
  // Another inference function by name ("decode"); see pock_engine_run.
  Status run(const std::string& function) { return wrap(pock_engine_run(e_, function.c_str())); }
  bool has_function(const std::string& function) const { return pock_engine_has_function(e_, function.c_str()) != 0; }
  Result<float> train_step() {
    float loss = 0;
    POCK_RETURN_IF_ERROR(wrap(pock_engine_train_step(e_, &loss)));
    return loss;
  }
  Result<float> eval_step() {
    float loss = 0;
    POCK_RETURN_IF_ERROR(wrap(pock_engine_eval_step(e_, &loss)));
    return loss;
  }
  int64_t step() const { return pock_engine_step(e_); }
  bool can_train() const { return pock_engine_can_train(e_) != 0; }
  Status get_parameter(const std::string& name, void* data, size_t nbytes) {
    return wrap(pock_engine_get_parameter(e_, name.c_str(), data, nbytes));
  }
  Status set_parameter(const std::string& name, const void* data, size_t nbytes) {
    return wrap(pock_engine_set_parameter(e_, name.c_str(), data, nbytes));
  }
  Status save_checkpoint(const std::string& path) { return wrap(pock_engine_save_checkpoint(e_, path.c_str())); }
  Status load_checkpoint(const std::string& path) { return wrap(pock_engine_load_checkpoint(e_, path.c_str())); }
  // Built-in backends, then every plugin asked for, loaded or not.
  std::vector<BackendInfo> backends() {
    std::vector<BackendInfo> out;
    for (int32_t i = 0; i < pock_engine_backend_count(e_); ++i) {
      pock_backend_info b{};
      b.struct_size = sizeof b;
      if (pock_engine_backend_info(e_, i, &b) != POCK_OK) break;
      out.push_back({b.name, b.library, b.status == POCK_OK ? Status::ok() : Status(static_cast<Code>(b.status), b.message),
                     b.ops_bound, b.own_memory != 0});
    }
    return out;
  }
  pock_engine* handle() { return e_; }

 private:
  explicit Engine(pock_engine* e) : e_(e) {}
  Status wrap(pock_status s) const {
    return s == POCK_OK ? Status::ok() : Status(static_cast<Code>(s), pock_engine_last_error(e_));
  }
  template <typename OpenFn>
  static Result<Engine> open_with(OpenFn&& fn, const Options& options) {
    pock_engine_options o;
    pock_engine_options_init(&o);
    o.num_threads = options.num_threads;
    o.rollback_on_failure = options.rollback_on_failure ? 1 : 0;
    o.backend = options.backend.empty() ? nullptr : options.backend.c_str();
    std::vector<const char*> plugins;
    for (const std::string& p : options.backend_plugins) plugins.push_back(p.c_str());
    plugins.push_back(nullptr);
    o.backend_plugins = plugins.data();
    o.memory_budget_bytes = options.memory_budget_bytes;
    pock_engine* e = nullptr;
    const pock_status s = fn(&o, &e);
    if (s != POCK_OK) return Status(static_cast<Code>(s), pock_last_open_error());
    return Engine(e);
  }
  pock_engine* e_ = nullptr;
};

}  // namespace pock
