// The C boundary: nothing throws across it; every failure becomes a status and a message.
#include <atomic>
#include <cstddef>
#include <new>
#include <string>

#include "pock/pock.h"
#include "runtime/engine_core.hpp"

struct pock_engine {
  std::unique_ptr<pock::EngineCore> core;
  std::string last_error;
  std::atomic<bool> in_call{false};  // a thread is inside a call: a second one gets POCK_ERR_BUSY
};

namespace {

thread_local std::string g_open_error;

pock_status record(pock_engine* e, const pock::Status& s) {
  if (s.is_ok()) {
    e->last_error.clear();
    return POCK_OK;
  }
  e->last_error = s.message();
  return static_cast<pock_status>(s.code());
}

pock::EngineOptions to_options(const pock_engine_options* o) {
  pock::EngineOptions out;
  if (!o) return out;
  out.num_threads = o->num_threads;
  out.rollback_on_failure = o->rollback_on_failure != 0;
  if (o->backend) out.backend = o->backend;
  // Members past the caller's struct_size are absent (an app built against an older header).
  if (o->struct_size >= offsetof(pock_engine_options, backend_plugins) + sizeof(o->backend_plugins) &&
      o->backend_plugins) {
    for (const char* const* p = o->backend_plugins; *p; ++p) out.backend_plugins.emplace_back(*p);
  }
  if (o->struct_size >= offsetof(pock_engine_options, memory_budget_bytes) + sizeof(o->memory_budget_bytes)) {
    out.memory_budget_bytes = o->memory_budget_bytes;
  }
  return out;
}

template <typename Open>
pock_status open_with(Open&& open, pock_engine** out) {
  if (!out) {
    g_open_error = "out_engine is NULL";
    return POCK_ERR_INVALID_ARGUMENT;
  }
  *out = nullptr;
  try {
    auto result = open();
    if (!result.is_ok()) {
      g_open_error = result.status().message();
      return static_cast<pock_status>(result.status().code());
    }
    *out = new pock_engine;
    (*out)->core = std::move(result.value());
    g_open_error.clear();
    return POCK_OK;
  } catch (const std::bad_alloc&) {
    g_open_error = "out of memory while opening the blob";
    return POCK_ERR_OUT_OF_MEMORY;
  } catch (const std::exception& ex) {
    g_open_error = ex.what();
    return POCK_ERR_INTERNAL;
  }
}

// Marks an engine as in a call for one scope; acquired() is false when another thread holds it.
class CallScope {
 public:
  explicit CallScope(pock_engine* e) : e_(e), acquired_(!e->in_call.exchange(true, std::memory_order_acquire)) {}
  ~CallScope() {
    if (acquired_) e_->in_call.store(false, std::memory_order_release);
  }
  CallScope(const CallScope&) = delete;
  CallScope& operator=(const CallScope&) = delete;
  bool acquired() const { return acquired_; }

 private:
  pock_engine* e_;
  bool acquired_;
};

// Runs `fn` (returning pock::Status) with exceptions fenced off and concurrent calls refused.
template <typename Fn>
pock_status guarded(pock_engine* e, Fn&& fn) {
  if (!e) return POCK_ERR_INVALID_ARGUMENT;
  const CallScope call(e);
  if (!call.acquired()) return POCK_ERR_BUSY;  // last_error belongs to the call in progress
  try {
    return record(e, fn());
  } catch (const std::bad_alloc&) {
    e->last_error = "out of memory";
    return POCK_ERR_OUT_OF_MEMORY;
  } catch (const std::exception& ex) {
    e->last_error = ex.what();
    return POCK_ERR_INTERNAL;
  }
}

pock::Status need(const void* p, const char* what) {
  return p ? pock::Status::ok() : pock::Status(pock::Code::kInvalidArgument, std::string(what) + " is NULL");
}

}  // namespace

extern "C" {

void pock_engine_options_init(pock_engine_options* options) {
  if (!options) return;
  *options = pock_engine_options{};
  options->struct_size = sizeof(pock_engine_options);
  options->num_threads = 0;
  options->rollback_on_failure = 1;
  options->backend = nullptr;
  options->backend_plugins = nullptr;
  options->memory_budget_bytes = 0;
}

pock_status pock_engine_open_file(const char* path, const pock_engine_options* options, pock_engine** out_engine) {
  if (!path) {
    g_open_error = "path is NULL";
    return POCK_ERR_INVALID_ARGUMENT;
  }
  return open_with([&] { return pock::EngineCore::open_file(path, to_options(options)); }, out_engine);
}

pock_status pock_engine_open_buffer(const void* data, size_t size, const pock_engine_options* options,
                                    pock_engine** out_engine) {
  if (!data) {
    g_open_error = "data is NULL";
    return POCK_ERR_INVALID_ARGUMENT;
  }
  return open_with([&] { return pock::EngineCore::open_buffer(data, size, to_options(options)); }, out_engine);
}

void pock_engine_close(pock_engine* engine) { delete engine; }

const char* pock_engine_last_error(const pock_engine* engine) { return engine ? engine->last_error.c_str() : ""; }

const char* pock_last_open_error(void) { return g_open_error.c_str(); }

pock_status pock_engine_tensor_info(pock_engine* e, const char* name, pock_tensor_info* info) {
  return guarded(e, [&] {
    POCK_RETURN_IF_ERROR(need(name, "name"));
    POCK_RETURN_IF_ERROR(need(info, "info"));
    return e->core->tensor_info(name, info);
  });
}

pock_status pock_engine_set_input(pock_engine* e, const char* name, const void* data, size_t nbytes) {
  return guarded(e, [&] {
    POCK_RETURN_IF_ERROR(need(name, "name"));
    return e->core->set_input(name, data, nbytes);
  });
}

pock_status pock_engine_get_output(pock_engine* e, const char* name, void* data, size_t nbytes) {
  return guarded(e, [&] {
    POCK_RETURN_IF_ERROR(need(name, "name"));
    return e->core->get_output(name, data, nbytes);
  });
}

pock_status pock_engine_infer(pock_engine* e) {
  return guarded(e, [&] { return e->core->infer(); });
}

pock_status pock_engine_run(pock_engine* e, const char* function) {
  return guarded(e, [&] {
    if (!function) return pock::Status(pock::Code::kInvalidArgument, "pock_engine_run: the function name is NULL");
    return e->core->run_function(function);
  });
}

int pock_engine_has_function(const pock_engine* e, const char* function) {
  return e && function && e->core->has_function(function) ? 1 : 0;
}

pock_status pock_engine_train_step(pock_engine* e, float* out_loss) {
  return guarded(e, [&] { return e->core->train_step(out_loss); });
}

pock_status pock_engine_eval_step(pock_engine* e, float* out_loss) {
  return guarded(e, [&] { return e->core->eval_step(out_loss); });
}

int64_t pock_engine_step(const pock_engine* e) { return e ? e->core->step() : 0; }

int pock_engine_can_train(const pock_engine* e) { return e && e->core->can_train() ? 1 : 0; }

pock_status pock_engine_get_parameter(pock_engine* e, const char* name, void* data, size_t nbytes) {
  return guarded(e, [&] {
    POCK_RETURN_IF_ERROR(need(name, "name"));
    return e->core->get_parameter(name, data, nbytes);
  });
}

pock_status pock_engine_set_parameter(pock_engine* e, const char* name, const void* data, size_t nbytes) {
  return guarded(e, [&] {
    POCK_RETURN_IF_ERROR(need(name, "name"));
    return e->core->set_parameter(name, data, nbytes);
  });
}

int32_t pock_engine_backend_count(const pock_engine* e) {
  return e ? static_cast<int32_t>(e->core->backend_entries().size()) : 0;
}

pock_status pock_engine_backend_info(pock_engine* e, int32_t index, pock_backend_info* info) {
  return guarded(e, [&] {
    POCK_RETURN_IF_ERROR(need(info, "info"));
    const auto& entries = e->core->backend_entries();
    if (index < 0 || static_cast<size_t>(index) >= entries.size()) {
      return pock::Status(pock::Code::kNotFound, "backend index " + std::to_string(index) + " of " +
                                                     std::to_string(entries.size()));
    }
    if (info->struct_size < sizeof(pock_backend_info)) {
      return pock::Status(pock::Code::kInvalidArgument, "info->struct_size is " + std::to_string(info->struct_size) +
                                                            "; set it to sizeof(pock_backend_info)");
    }
    const pock::BackendEntry& entry = entries[static_cast<size_t>(index)];
    info->name = entry.name.c_str();
    info->library = entry.library.c_str();
    info->status = static_cast<pock_status>(entry.status.code());
    info->message = entry.status.message().c_str();
    info->ops_bound = entry.backend ? e->core->ops_bound_to(entry.backend.get()) : 0;
    info->own_memory = entry.backend && pock::owns_memory(*entry.backend) ? 1 : 0;
    return pock::Status::ok();
  });
}

pock_status pock_engine_save_checkpoint(pock_engine* e, const char* path) {
  return guarded(e, [&] {
    POCK_RETURN_IF_ERROR(need(path, "path"));
    return e->core->save_checkpoint(path);
  });
}

pock_status pock_engine_load_checkpoint(pock_engine* e, const char* path) {
  return guarded(e, [&] {
    POCK_RETURN_IF_ERROR(need(path, "path"));
    return e->core->load_checkpoint(path);
  });
}

}  // extern "C"
