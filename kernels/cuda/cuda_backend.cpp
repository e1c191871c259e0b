// The cuda backend: a device-memory backend (include/pock/backend.h) over the kernels of
// cuda_families.def. One Instance per init — one per engine or compilation — with its own stream:
// ops and copies run in stream order without waiting, a copy to the host waits for the work
// before it, and pock_synchronize reports what failed. Nothing touches the GPU before the first
// alloc or prepare, so the compiler can ask supports_op on a machine without one. A step's runs
// of ops are replayed as CUDA graphs (step_graphs.hpp) unless POCK_CUDA_GRAPHS=0.
// Nothing throws across the boundary: every entry point catches, and reports through last_error.
#include "kernels/cuda/cuda_backend.hpp"

#include <cstdint>
#include <cstring>
#include <new>
#include <string>

#include "kernels/cuda/all_finite.hpp"
#include "kernels/cuda/cuda_families.hpp"
#include "kernels/cuda/instance.hpp"
#include "kernels/cuda/step_graphs.hpp"
#include "kernels/cuda/stream.hpp"

namespace pock {

const KernelTable& cuda_kernels() {
  static const KernelTable table = [] {
    KernelTable t;
#define POCK_CUDA_FAMILY(family) cuda::register_##family(t);
#include "kernels/cuda/cuda_families.def"
#undef POCK_CUDA_FAMILY
    return t;
  }();
  return table;
}

namespace cuda {
namespace {

// cudaMalloc's guarantee; the runtime asks for 64.
constexpr size_t kMaxAlignment = 256;

struct BoundKernel {
  const KernelDef* def;
  void* state;
};

// cuBLAS's own workspace when steps are captured: NVIDIA's recommendation for Hopper, ample below.
constexpr size_t kCublasGraphWorkspace = size_t{32} << 20;

struct Backend {
  Instance instance;
  StepGraphs graphs;  // off with POCK_CUDA_GRAPHS=0; destroyed before the instance's stream
  bool use_graphs = StepGraphs::enabled_by_environment();
};

Backend* backend(void* context) { return static_cast<Backend*>(context); }
Instance* instance(void* context) { return &backend(context)->instance; }

pock_status fail(void* context, const Status& s) {
  instance(context)->last_error = s.message();
  return static_cast<pock_status>(s.code());
}

// An op runs here only when every tensor it touches is in this backend's memory: the runtime
// gives the device no other, and the compiler asks with the tensors placed here.
bool all_in_device_memory(const pock_op_desc& op) {
  for (int32_t i = 0; i < op.num_inputs; ++i) {
    if (op.inputs[i].rank >= 0 && op.inputs[i].memory_space != POCK_MEMORY_DEVICE) return false;
  }
  for (int32_t i = 0; i < op.num_outputs; ++i) {
    if (op.outputs[i].memory_space != POCK_MEMORY_DEVICE) return false;
  }
  return true;
}

const KernelDef* find_kernel(const pock_op_desc* op) {
  if (!op || !op->op || !all_in_device_memory(*op)) return nullptr;
  const KernelDef* def = cuda_kernels().find(op->op, kernel_key_dtype(*op));
  if (!def || (def->accepts && !def->accepts(*op))) return nullptr;
  return def;
}

// Launches the ops recorded for a graph (unless POCK_CUDA_GRAPHS=0) before the host looks at device
// memory; a no-op without graphs. The caller holds a ScopedInstance.
Status launch_recorded(void* context) {
  Backend* b = backend(context);
  return b->use_graphs && b->instance.started() ? b->graphs.flush(b->instance) : Status::ok();
}

// Before an op is prepared or released: what was recorded runs, and graphs go (a workspace may
// move, a handle may die).
Status settle_graphs(void* context) {
  const Status s = launch_recorded(context);
  if (backend(context)->use_graphs) backend(context)->graphs.clear();
  return s;
}

int32_t supports_op(void*, const pock_op_desc* op) {
  try {
    const KernelDef* def = find_kernel(op);
    return def ? def->score : 0;
  } catch (...) {
    return 0;
  }
}

pock_status prepare_op(void* context, const pock_op_desc* op, void** handle) {
  try {
    const KernelDef* def = find_kernel(op);
    if (!def) {
      return fail(context, Status(Code::kMissingKernel, std::string("cuda does not run op ") + (op && op->op ? op->op : "?") +
                                                            " as described (dtypes, shapes, attributes or memory)"));
    }
    Instance* in = instance(context);
    if (Status s = in->start(); !s.is_ok()) return fail(context, s);
    ScopedInstance current(in);
    if (Status s = settle_graphs(context); !s.is_ok()) return fail(context, s);
    void* state = nullptr;
    if (def->prepare_scoped || def->prepare) {
      const Status s = def->prepare_scoped ? def->prepare_scoped(*op, in->scope(), &state) : def->prepare(*op, &state);
      if (!s.is_ok()) return fail(context, s);
    }
    auto* bound = new (std::nothrow) BoundKernel{def, state};
    if (!bound) {
      if (def->release) def->release(state);
      return fail(context, Status(Code::kOutOfMemory, "cuda: out of memory preparing an op"));
    }
    if (backend(context)->use_graphs) backend(context)->graphs.reserve_one_more();
    *handle = bound;
    return POCK_OK;
  } catch (const std::bad_alloc&) {
    return fail(context, Status(Code::kOutOfMemory, "cuda: out of memory preparing an op"));
  } catch (...) {
    return fail(context, Status(Code::kInternal, "cuda: unexpected failure preparing an op"));
  }
}

pock_status execute_op(void* context, void* handle, const pock_op_desc* op) {
  try {
    Instance* in = instance(context);
    cudaSetDevice(in->device());
    ScopedInstance current(in);
    auto* bound = static_cast<BoundKernel*>(handle);
    if (backend(context)->use_graphs) {  // launched with its run at the next copy or synchronize
      backend(context)->graphs.record(bound->def, bound->state, op);
      return POCK_OK;
    }
    const Status s = bound->def->run(KernelCall{op, bound->state});
    return s.is_ok() ? POCK_OK : fail(context, s);
  } catch (...) {
    return fail(context, Status(Code::kInternal, "cuda: unexpected failure running an op"));
  }
}

void release_op(void* context, void* handle) {
  auto* bound = static_cast<BoundKernel*>(handle);
  if (!bound) return;
  Instance* in = instance(context);
  if (in->started()) cudaSetDevice(in->device());
  ScopedInstance current(in);
  (void)settle_graphs(context);  // nothing to report to: release has no status
  if (bound->def->release) bound->def->release(bound->state);
  delete bound;
}

void* alloc(void* context, size_t nbytes, size_t alignment) {
  try {
    Instance* in = instance(context);
    if (Status s = in->start(); !s.is_ok()) {
      fail(context, s);
      return nullptr;
    }
    if (alignment > kMaxAlignment || (alignment & (alignment - 1)) != 0) {
      fail(context, Status(Code::kInvalidArgument, "cuda: alignment " + std::to_string(alignment) + " is not a power of two up to 256"));
      return nullptr;
    }
    void* p = nullptr;
    if (Status s = check(cudaMalloc(&p, nbytes == 0 ? 1 : nbytes), "cuda: cudaMalloc of " + std::to_string(nbytes) + " bytes");
        !s.is_ok()) {
      fail(context, s);
      return nullptr;
    }
    return p;
  } catch (...) {
    return nullptr;
  }
}

void free_buffer(void* context, void* p) {
  Instance* in = instance(context);
  if (!p || !in->started()) return;
  cudaSetDevice(in->device());
  cudaFree(p);  // waits for the device: nothing in flight can still use the buffer
}

// Device failures (a faulted context) are POCK_ERR_BACKEND: the runtime drops the device.
pock_status cuda_failure(void* context, const Status& s) {
  fail(context, s);
  return s.code() == Code::kBackend ? POCK_ERR_BACKEND : static_cast<pock_status>(s.code());
}

// Work the host puts on the stream after what is recorded so far (copies, memsets): starts the
// instance, launches the recorded ops, then `enqueue` (a Status; kBackend drops the device).
template <typename Enqueue>
pock_status in_stream_order(void* context, const char* what, Enqueue&& enqueue) {
  try {
    Instance* in = instance(context);
    if (Status s = in->start(); !s.is_ok()) return fail(context, s);
    ScopedInstance current(in);
    if (Status s = launch_recorded(context); !s.is_ok()) return cuda_failure(context, s);
    const Status s = enqueue(in);
    return s.is_ok() ? POCK_OK : cuda_failure(context, s);
  } catch (...) {
    return fail(context, Status(Code::kInternal, std::string("cuda: unexpected failure in ") + what));
  }
}

pock_status copy(void* context, void* dst, const void* src, size_t nbytes, int32_t direction) {
  return in_stream_order(context, "copy", [&](Instance* in) {
    if (nbytes == 0) return Status::ok();
    cudaMemcpyKind kind;
    switch (direction) {
      case POCK_COPY_HOST_TO_DEVICE: kind = cudaMemcpyHostToDevice; break;
      case POCK_COPY_DEVICE_TO_HOST: kind = cudaMemcpyDeviceToHost; break;
      case POCK_COPY_DEVICE_TO_DEVICE: kind = cudaMemcpyDeviceToDevice; break;
      default: return Status(Code::kInvalidArgument, "cuda: copy direction " + std::to_string(direction));
    }
    // From pageable host memory, cudaMemcpyAsync returns once the source is staged, so the
    // caller may reuse it; in stream order after every op accepted before.
    Status s = check(cudaMemcpyAsync(dst, src, nbytes, kind, in->stream()), "cuda: copy of " + std::to_string(nbytes) + " bytes");
    // The host reads what it asked for as soon as copy returns.
    if (s.is_ok() && kind == cudaMemcpyDeviceToHost) s = check(cudaStreamSynchronize(in->stream()), "cuda: copy to the host");
    return s;
  });
}

// pock_zero: one memset in stream order, where the runtime would copy zeros 16 KB at a time.
pock_status zero(void* context, void* dst, size_t nbytes) {
  return in_stream_order(context, "zero", [&](Instance* in) {
    if (nbytes == 0) return Status::ok();
    return check(cudaMemsetAsync(dst, 0, nbytes, in->stream()), "cuda: zeroing " + std::to_string(nbytes) + " bytes");
  });
}

pock_status synchronize(void* context) {
  try {
    Instance* in = instance(context);
    if (!in->started()) return POCK_OK;
    ScopedInstance current(in);
    if (Status s = launch_recorded(context); !s.is_ok()) return cuda_failure(context, s);
    const Status s = check(cudaStreamSynchronize(in->stream()), "cuda: a kernel failed");
    if (!s.is_ok()) return cuda_failure(context, s);
    if (const int32_t site = in->take_error_site()) {
      return fail(context, Status(Code::kInvalidArgument, in->error_site_message(site)));
    }
    return POCK_OK;
  } catch (...) {
    return fail(context, Status(Code::kInternal, "cuda: unexpected failure in synchronize"));
  }
}

// One finder per buffer, launched without waiting, each marking the flag word with its buffer's
// index + 1; then one wait for the stream: a step's check costs one synchronization, not one per
// parameter. Recorded graph runs go first, as the host is about to look at device memory.
int32_t all_finite_many(void* context, const pock_buffer_span* buffers, size_t count, size_t* non_finite) {
  try {
    if ((count > 0 && !buffers) || !non_finite) {
      return fail(context, Status(Code::kInvalidArgument, "cuda: all_finite_many needs the buffers and a place for the answer")), -1;
    }
    if (count >= static_cast<size_t>(INT32_MAX)) {
      return fail(context, Status(Code::kInvalidArgument, "cuda: all_finite_many of " + std::to_string(count) + " buffers")), -1;
    }
    Instance* in = instance(context);
    if (Status s = in->start(); !s.is_ok()) return fail(context, s), -1;
    ScopedInstance current(in);
    if (Status s = launch_recorded(context); !s.is_ok()) return fail(context, s), -1;
    *in->flag_host() = 0;
    Status s = Status::ok();
    for (size_t k = 0; k < count && s.is_ok(); ++k) {
      const pock_buffer_span& b = buffers[k];
      s = check(launch_find_non_finite(b.data, b.nbytes, b.dtype, in->flag_device(), static_cast<int32_t>(k + 1), in->stream()),
                "cuda: all_finite launch");
    }
    if (s.is_ok()) s = check(cudaStreamSynchronize(in->stream()), "cuda: all_finite");
    if (!s.is_ok()) return fail(context, s), -1;
    const int32_t found = *in->flag_host();
    if (found == 0) return 1;
    *non_finite = static_cast<size_t>(found - 1);
    return 0;
  } catch (...) {
    return fail(context, Status(Code::kInternal, "cuda: unexpected failure in all_finite")), -1;
  }
}

int32_t all_finite(void* context, const void* data, size_t nbytes, pock_dtype dtype) {
  const pock_buffer_span one{data, nbytes, dtype};
  size_t which = 0;
  return all_finite_many(context, &one, 1, &which);
}

size_t workspace_bytes(void* context) { return instance(context)->workspace_size(); }

// Diagnostics (kCudaGraphCountExtension): graphs captured and live.
size_t graph_count(void* context) { return backend(context)->graphs.graphs(); }

const char* last_error(void* context) { return instance(context)->last_error.c_str(); }

void* get_proc_address(void*, const char* name) {
  if (!name) return nullptr;
  if (std::strcmp(name, POCK_EXT_SYNCHRONIZE) == 0) return reinterpret_cast<void*>(static_cast<pock_synchronize_fn>(synchronize));
  if (std::strcmp(name, POCK_EXT_ALL_FINITE) == 0) return reinterpret_cast<void*>(static_cast<pock_all_finite_fn>(all_finite));
  if (std::strcmp(name, POCK_EXT_ZERO) == 0) return reinterpret_cast<void*>(static_cast<pock_zero_fn>(zero));
  if (std::strcmp(name, POCK_EXT_ALL_FINITE_MANY) == 0) {
    return reinterpret_cast<void*>(static_cast<pock_all_finite_many_fn>(all_finite_many));
  }
  if (std::strcmp(name, kCudaGraphCountExtension) == 0) return reinterpret_cast<void*>(graph_count);
  if (std::strcmp(name, POCK_EXT_WORKSPACE_BYTES) == 0) {
    return reinterpret_cast<void*>(static_cast<pock_workspace_bytes_fn>(workspace_bytes));
  }
  return nullptr;
}

void destroy(void* context) { delete backend(context); }

}  // namespace
}  // namespace cuda

pock_status builtin_backend_init_cuda(pock_backend_v1* out) {
  if (!out || out->abi_version < 1 || out->struct_size < sizeof(pock_backend_v1)) return POCK_ERR_INVALID_ARGUMENT;
  auto* in = new (std::nothrow) cuda::Backend();
  if (!in) return POCK_ERR_OUT_OF_MEMORY;
  if (in->use_graphs) in->instance.want_cublas_workspace(cuda::kCublasGraphWorkspace);
  *out = pock_backend_v1{};
  out->abi_version = POCK_BACKEND_ABI_VERSION;
  out->struct_size = sizeof(pock_backend_v1);
  out->name = "cuda";
  out->context = in;
  out->supports_op = cuda::supports_op;
  out->prepare_op = cuda::prepare_op;
  out->execute_op = cuda::execute_op;
  out->release_op = cuda::release_op;
  out->alloc = cuda::alloc;
  out->free = cuda::free_buffer;
  out->copy = cuda::copy;
  out->last_error = cuda::last_error;
  out->get_proc_address = cuda::get_proc_address;
  out->destroy = cuda::destroy;
  return POCK_OK;
}

}  // namespace pock
