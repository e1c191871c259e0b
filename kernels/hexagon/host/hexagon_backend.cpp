// The Hexagon backend as a plugin (include/pock/backend.h): pock_backend_init_v1 fills the struct
// with thin entry points over a HexagonDevice, one per init (one per engine or compilation). The
// DSP process starts on the first alloc, so a compiler that only asks supports_op starts nothing.
// Nothing throws across the boundary: every entry point catches, and reports through last_error.
#include <algorithm>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <vector>

#include "../pock_hexagon.h"
#include "encoding.hpp"
#include "hexagon_device.hpp"
#include "pock/backend.h"

namespace pock::hexagon {
namespace {

// Preferred over the CPU backends (score 10) for what it runs: loading the plugin asks for it.
constexpr int32_t kScore = 100;

// Every live instance, for the process-wide counters and fault hook (tests reach the plugin only
// as a library an engine loaded).
std::mutex g_live_mutex;
std::vector<HexagonDevice*> g_live;
thread_local std::string g_init_error;  // why this thread's last init failed: the ABI carries only a status

HexagonDevice* device(void* context) { return static_cast<HexagonDevice*>(context); }

bool all_on_device(const pock_tensor_desc* tensors, int32_t n) {
  for (int32_t i = 0; i < n; ++i) {
    if (tensors[i].rank >= 0 && tensors[i].memory_space != POCK_MEMORY_DEVICE) return false;
  }
  return true;
}

// The encoding of `op` when the DSP runs it as described.
bool encode(const pock_op_desc* op, Encoding* out) {
  if (!op || !op->op || !all_on_device(op->inputs, op->num_inputs) || !all_on_device(op->outputs, op->num_outputs)) {
    return false;
  }
  const EncodeFn fn = find_encoder(op->op);
  return fn && fn(*op, out);
}

int32_t supports_op(void*, const pock_op_desc* op) {
  try {
    Encoding e;
    return encode(op, &e) ? kScore : 0;
  } catch (...) {
    return 0;
  }
}

pock_status prepare_op(void* context, const pock_op_desc* op, void** handle) {
  try {
    Encoding e;
    if (!encode(op, &e)) {
      device(context)->set_error(std::string("hexagon: the DSP does not run op ") + (op && op->op ? op->op : "?") +
                                 " as described (dtypes, shapes or attributes)");
      return POCK_ERR_MISSING_KERNEL;
    }
    auto prepared = std::make_unique<PreparedOp>();
    const pock_status s = device(context)->prepare(*op, e.record, e.source, prepared.get());
    if (s != POCK_OK) return s;
    *handle = prepared.release();
    return POCK_OK;
  } catch (const std::bad_alloc&) {
    device(context)->set_error("hexagon: out of memory preparing an op");
    return POCK_ERR_OUT_OF_MEMORY;
  } catch (...) {
    device(context)->set_error("hexagon: unexpected failure preparing an op");
    return POCK_ERR_INTERNAL;
  }
}

pock_status execute_op(void* context, void* handle, const pock_op_desc*) {
  return device(context)->enqueue(*static_cast<const PreparedOp*>(handle));
}

void release_op(void*, void* handle) { delete static_cast<PreparedOp*>(handle); }

void* alloc(void* context, size_t nbytes, size_t alignment) {
  try {
    return device(context)->allocate(nbytes, alignment);
  } catch (...) {
    device(context)->set_error("hexagon: unexpected failure in alloc");
    return nullptr;
  }
}

void free_buffer(void* context, void* p) { device(context)->free(p); }

pock_status copy(void* context, void* dst, const void* src, size_t nbytes, int32_t direction) {
  try {
    return device(context)->copy(dst, src, nbytes, direction);
  } catch (...) {
    device(context)->set_error("hexagon: unexpected failure in copy");
    return POCK_ERR_INTERNAL;
  }
}

const char* last_error(void* context) { return device(context)->last_error(); }

pock_status synchronize(void* context) {
  try {
    return device(context)->synchronize();
  } catch (...) {
    device(context)->set_error("hexagon: unexpected failure in synchronize");
    return POCK_ERR_INTERNAL;
  }
}

int32_t all_finite(void* context, const void* data, size_t nbytes, pock_dtype dtype) {
  return device(context)->all_finite(data, nbytes, dtype);
}

int32_t all_finite_many(void* context, const pock_buffer_span* buffers, size_t count, size_t* non_finite) {
  if ((count > 0 && !buffers) || !non_finite) {
    device(context)->set_error("hexagon: all_finite_many needs the buffers and a place for the answer");
    return -1;
  }
  return device(context)->all_finite_many(buffers, count, non_finite);
}

void counters(void* context, pock_hexagon_counters* out) {
  if (out) *out = device(context)->counters();
}

void inject_fault(void* context, uint32_t fault) { device(context)->arm_fault(fault); }

void* get_proc_address(void*, const char* name) {
  if (!name) return nullptr;
  if (std::strcmp(name, POCK_EXT_SYNCHRONIZE) == 0) return reinterpret_cast<void*>(synchronize);
  if (std::strcmp(name, POCK_EXT_ALL_FINITE) == 0) return reinterpret_cast<void*>(all_finite);
  if (std::strcmp(name, POCK_EXT_ALL_FINITE_MANY) == 0) return reinterpret_cast<void*>(all_finite_many);
  if (std::strcmp(name, POCK_HEXAGON_EXT_COUNTERS) == 0) return reinterpret_cast<void*>(counters);
  if (std::strcmp(name, POCK_HEXAGON_EXT_INJECT_FAULT) == 0) return reinterpret_cast<void*>(inject_fault);
  return nullptr;
}

void destroy(void* context) {
  {
    std::lock_guard<std::mutex> lock(g_live_mutex);
    g_live.erase(std::remove(g_live.begin(), g_live.end(), device(context)), g_live.end());
  }
  delete device(context);
}

}  // namespace
}  // namespace pock::hexagon

using namespace pock::hexagon;

extern "C" {

__attribute__((visibility("default"))) pock_status pock_backend_init_v1(pock_backend_v1* out) {
  if (!out || out->abi_version < 1 || out->struct_size < sizeof(pock_backend_v1)) return POCK_ERR_INVALID_ARGUMENT;
  try {
    DspConfig config;
    std::string why;
    if (!load_dsp_config(&config, &why)) {
      g_init_error = "hexagon: " + why;
      return POCK_ERR_NOT_FOUND;
    }
    g_init_error.clear();
    auto* d = new HexagonDevice(std::move(config));
    {
      std::lock_guard<std::mutex> lock(g_live_mutex);
      g_live.push_back(d);
    }
    *out = pock_backend_v1{};
    out->abi_version = POCK_BACKEND_ABI_VERSION;
    out->struct_size = sizeof(pock_backend_v1);
    out->name = "hexagon";
    out->context = d;
    out->supports_op = supports_op;
    out->prepare_op = prepare_op;
    out->execute_op = execute_op;
    out->release_op = release_op;
    out->alloc = alloc;
    out->free = free_buffer;
    out->copy = copy;
    out->last_error = last_error;
    out->get_proc_address = get_proc_address;
    out->destroy = destroy;
    return POCK_OK;
  } catch (...) {
    return POCK_ERR_OUT_OF_MEMORY;
  }
}

__attribute__((visibility("default"))) const char* pock_hexagon_init_error(void) { return g_init_error.c_str(); }

// Reads every instance's counters: call it between engine calls, not while another thread steps.
__attribute__((visibility("default"))) void pock_hexagon_process_counters(pock_hexagon_counters* out) {
  if (!out) return;
  std::lock_guard<std::mutex> lock(g_live_mutex);
  pock_hexagon_counters sum{};
  for (const HexagonDevice* d : g_live) {
    const pock_hexagon_counters c = d->counters();
    sum.messages += c.messages;
    sum.ops_enqueued += c.ops_enqueued;
    sum.ops_run += c.ops_run;
    for (int i = 0; i < 3; ++i) {
      sum.copies[i] += c.copies[i];
      sum.copy_bytes[i] += c.copy_bytes[i];
    }
    sum.reply_wait_ns += c.reply_wait_ns;
    sum.dsp_deaths += c.dsp_deaths;
    if (c.dsp_pid != 0) sum.dsp_pid = c.dsp_pid;  // the latest instance that started one
  }
  *out = sum;
}

__attribute__((visibility("default"))) void pock_hexagon_process_inject_fault(uint32_t fault) {
  std::lock_guard<std::mutex> lock(g_live_mutex);
  for (HexagonDevice* d : g_live) d->arm_fault(fault);
}

}  // extern "C"
