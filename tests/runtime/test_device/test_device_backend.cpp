// A device for tests, as a plugin: its memory is pages the host cannot touch — PROT_NONE, opened
// only while the device's own calls run — so a byte the runtime reads or writes without copy()
// faults the test. Its ops run on kernels/ref (linked in), so a model trained partly on it must
// equal a ref-only run. It claims a fixed set of ops (convolutions, linear layers and matmuls with
// their gradients, Relu and its mask ops, the optimizer updates): about half of a CNN's or a
// transformer block's ops. Counters, a fault hook, a NaN planter and a switch for the all-finite
// extensions it offers are plain C functions (test_device.h).
#include <sys/mman.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <map>
#include <set>
#include <string>

#include "pock/backend.h"
#include "runtime/table_backend.hpp"
#include "tests/runtime/test_device/test_device.h"

namespace {

struct Device {
  pock_backend_v1 ref{};  // the reference kernels, which run every op this device claims
  std::map<void*, size_t> buffers;
  test_device_counts counters{};
  int64_t fail_in = -1;  // executes until the device dies; -1: never
  int32_t offers = TEST_DEVICE_OFFERS_EVERYTHING;
  std::string poison_after;  // an op's name; empty: none
  bool dead = false;
  std::string error;
};

Device g_device;

// Opens every buffer of the device for the duration of one of its calls.
class Unprotected {
 public:
  Unprotected() { set(PROT_READ | PROT_WRITE); }
  ~Unprotected() { set(PROT_NONE); }
  Unprotected(const Unprotected&) = delete;
  Unprotected& operator=(const Unprotected&) = delete;

 private:
  static void set(int protection) {
    for (const auto& [p, n] : g_device.buffers) mprotect(p, n, protection);
  }
};

const std::set<std::string> kClaimed = {
    "Conv2d", "Conv2dGradInput", "Conv2dGradWeight", "Conv2dGradBias", "Linear", "LinearInputGrad",
    "LinearWeightGrad", "MatMul", "Relu", "MaskGrad", "ClipMask", "SgdUpdate", "AdamUpdate"};

bool all_on_device(const pock_tensor_desc* tensors, int32_t n) {
  for (int32_t i = 0; i < n; ++i) {
    if (tensors[i].rank >= 0 && tensors[i].memory_space != POCK_MEMORY_DEVICE) return false;
  }
  return true;
}

int32_t supports_op(void*, const pock_op_desc* op) {
  if (!kClaimed.count(op->op)) return 0;
  if (!all_on_device(op->inputs, op->num_inputs) || !all_on_device(op->outputs, op->num_outputs)) return 0;
  return g_device.ref.supports_op(g_device.ref.context, op) > 0 ? 1000 : 0;
}

pock_status prepare_op(void*, const pock_op_desc* op, void** handle) {
  Unprotected open;
  return g_device.ref.prepare_op(g_device.ref.context, op, handle);
}

pock_status execute_op(void*, void* handle, const pock_op_desc* op) {
  if (g_device.fail_in > 0 && --g_device.fail_in == 0) g_device.dead = true;
  if (g_device.dead) {
    g_device.error = std::string("the test device died running ") + op->op + " '" + op->name + "'";
    return POCK_ERR_BACKEND;
  }
  ++g_device.counters.executes;
  Unprotected open;
  const pock_status s = g_device.ref.execute_op(g_device.ref.context, handle, op);
  if (s != POCK_OK) g_device.error = g_device.ref.last_error(g_device.ref.context);
  if (s == POCK_OK && !g_device.poison_after.empty() && g_device.poison_after == op->name && op->num_inputs > 0 &&
      op->inputs[0].dtype == POCK_F32 && op->inputs[0].nbytes >= sizeof(float)) {
    const float nan = std::nanf("");
    std::memcpy(op->inputs[0].data, &nan, sizeof nan);
    g_device.poison_after.clear();
  }
  return s;
}

void release_op(void*, void* handle) { g_device.ref.release_op(g_device.ref.context, handle); }

void* alloc(void*, size_t nbytes, size_t) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const size_t rounded = (nbytes + page - 1) / page * page;
  void* p = mmap(nullptr, rounded, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    g_device.error = "mmap failed";
    return nullptr;
  }
  // Fresh device memory holds garbage (all bits set: NaN as f32), so that state the runtime
  // forgets to zero shows, where mmap's zero pages would hide it.
  mprotect(p, rounded, PROT_READ | PROT_WRITE);
  std::memset(p, 0xff, rounded);
  mprotect(p, rounded, PROT_NONE);
  g_device.buffers[p] = rounded;
  ++g_device.counters.allocs;
  return p;
}

void free_buffer(void*, void* p) {
  auto it = g_device.buffers.find(p);
  if (it == g_device.buffers.end()) return;
  munmap(p, it->second);
  g_device.buffers.erase(it);
  ++g_device.counters.frees;
}

pock_status copy(void*, void* dst, const void* src, size_t nbytes, int32_t direction) {
  if (direction < 0 || direction > 2) {
    g_device.error = "bad copy direction";
    return POCK_ERR_INVALID_ARGUMENT;
  }
  Unprotected open;
  std::memmove(dst, src, nbytes);
  ++g_device.counters.copies[direction];
  g_device.counters.copy_bytes[direction] += static_cast<int64_t>(nbytes);
  return POCK_OK;
}

bool finite(const void* data, size_t nbytes, pock_dtype dtype) {
  if (dtype != POCK_F32) return true;
  const float* v = static_cast<const float*>(data);
  for (size_t i = 0; i < nbytes / sizeof(float); ++i) {
    if (!std::isfinite(v[i])) return false;
  }
  return true;
}

int32_t all_finite(void*, const void* data, size_t nbytes, pock_dtype dtype) {
  ++g_device.counters.all_finite_calls;
  Unprotected open;
  return finite(data, nbytes, dtype) ? 1 : 0;
}

// Answers with the last bad buffer, not the first, so that a caller that assumes "first" is caught.
int32_t all_finite_many(void*, const pock_buffer_span* buffers, size_t count, size_t* non_finite) {
  ++g_device.counters.all_finite_many_calls;
  g_device.counters.all_finite_many_buffers += static_cast<int64_t>(count);
  Unprotected open;
  for (size_t k = count; k-- > 0;) {
    if (!finite(buffers[k].data, buffers[k].nbytes, buffers[k].dtype)) {
      *non_finite = k;
      return 0;
    }
  }
  return 1;
}

pock_status zero(void*, void* dst, size_t nbytes) {
  ++g_device.counters.zero_calls;
  g_device.counters.zero_bytes += static_cast<int64_t>(nbytes);
  Unprotected open;
  std::memset(dst, 0, nbytes);
  return POCK_OK;
}

const char* last_error(void*) { return g_device.error.c_str(); }

void* get_proc_address(void*, const char* name) {
  const int32_t offers = g_device.offers;
  if ((offers & TEST_DEVICE_OFFERS_ALL_FINITE) && std::strcmp(name, POCK_EXT_ALL_FINITE) == 0) return reinterpret_cast<void*>(all_finite);
  if ((offers & TEST_DEVICE_OFFERS_ALL_FINITE_MANY) && std::strcmp(name, POCK_EXT_ALL_FINITE_MANY) == 0) {
    return reinterpret_cast<void*>(all_finite_many);
  }
  if ((offers & TEST_DEVICE_OFFERS_ZERO) && std::strcmp(name, POCK_EXT_ZERO) == 0) return reinterpret_cast<void*>(zero);
  return nullptr;
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) pock_status pock_backend_init_v1(pock_backend_v1* out) {
  if (!out || out->abi_version < 1 || out->struct_size < sizeof(pock_backend_v1)) return POCK_ERR_INVALID_ARGUMENT;
  if (!g_device.ref.supports_op) {
    g_device.ref.abi_version = POCK_BACKEND_ABI_VERSION;
    g_device.ref.struct_size = sizeof(pock_backend_v1);
    const pock_status s = pock::fill_table_backend(&g_device.ref, "ref", &pock::ref_kernels());
    if (s != POCK_OK) return s;
  }
  g_device.dead = false;  // a new engine gets a working device
  g_device.fail_in = -1;
  *out = pock_backend_v1{};
  out->abi_version = POCK_BACKEND_ABI_VERSION;
  out->struct_size = sizeof(pock_backend_v1);
  out->name = "testdev";
  out->context = &g_device;
  out->supports_op = supports_op;
  out->prepare_op = prepare_op;
  out->execute_op = execute_op;
  out->release_op = release_op;
  out->alloc = alloc;
  out->free = free_buffer;
  out->copy = copy;
  out->last_error = last_error;
  out->get_proc_address = get_proc_address;
  return POCK_OK;
}

__attribute__((visibility("default"))) void test_device_counters(test_device_counts* out) { *out = g_device.counters; }

__attribute__((visibility("default"))) void test_device_fail_after(int64_t n) { g_device.fail_in = n; }

__attribute__((visibility("default"))) void test_device_offer(int32_t extensions) { g_device.offers = extensions; }

__attribute__((visibility("default"))) void test_device_poison_after(const char* op_name) {
  g_device.poison_after = op_name ? op_name : "";
}

}  // extern "C"
