#include "kernels/cuda/cublas_api.hpp"

#include <dlfcn.h>

namespace pock::cuda {
namespace {

// The soname of the toolkit this build compiled against (cmake/PockCuda.cmake).
#ifndef POCK_CUBLAS_LIBRARY
#define POCK_CUBLAS_LIBRARY "libcublas.so"
#endif

struct Loaded {
  CublasApi api{};
  bool ok = false;
  std::string why;
};

template <typename Fn>
bool resolve(void* library, const char* symbol, Fn* out, std::string* why) {
  *out = reinterpret_cast<Fn>(dlsym(library, symbol));
  if (!*out && why->empty()) *why = std::string("cuda: ") + POCK_CUBLAS_LIBRARY + " has no symbol " + symbol;
  return *out != nullptr;
}

Loaded load() {
  Loaded l;
  void* library = dlopen(POCK_CUBLAS_LIBRARY, RTLD_NOW | RTLD_LOCAL);
#ifdef POCK_CUBLAS_TOOLKIT_PATH
  // Where the build found the toolkit, for machines whose loader path lacks it (as an rpath would).
  if (!library) library = dlopen(POCK_CUBLAS_TOOLKIT_PATH, RTLD_NOW | RTLD_LOCAL);
#endif
  if (!library) {
    const char* e = dlerror();
    l.why = std::string("cuda: cannot load cuBLAS (") + POCK_CUBLAS_LIBRARY + "): " + (e ? e : "unknown error");
    return l;
  }
  // Kept loaded for the process's life: handles may outlive any one engine's teardown order.
  CublasApi& a = l.api;
  // Every symbol is looked up, so that the message names the first missing one.
  bool ok = resolve(library, "cublasCreate_v2", &a.create, &l.why);
  ok = resolve(library, "cublasDestroy_v2", &a.destroy, &l.why) && ok;
  ok = resolve(library, "cublasSetStream_v2", &a.set_stream, &l.why) && ok;
  ok = resolve(library, "cublasSetAtomicsMode", &a.set_atomics_mode, &l.why) && ok;
  ok = resolve(library, "cublasGemmStridedBatchedEx", &a.gemm_strided_batched, &l.why) && ok;
  ok = resolve(library, "cublasGemmBatchedEx", &a.gemm_batched, &l.why) && ok;
  ok = resolve(library, "cublasSetWorkspace_v2", &a.set_workspace, &l.why) && ok;
  ok = resolve(library, "cublasGetStatusName", &a.status_name, &l.why) && ok;
  ok = resolve(library, "cublasGetStatusString", &a.status_string, &l.why) && ok;
  l.ok = ok;
  return l;
}

const Loaded& loaded() {
  static const Loaded l = load();  // thread-safe once
  return l;
}

}  // namespace

const CublasApi* cublas_api(std::string* why) {
  const Loaded& l = loaded();
  if (!l.ok && why) *why = l.why;
  return l.ok ? &l.api : nullptr;
}

std::string cublas_status_text(cublasStatus_t status) {
  const CublasApi* a = cublas_api(nullptr);
  if (!a) return "cuBLAS status " + std::to_string(static_cast<int>(status));
  return std::string(a->status_name(status)) + " (" + a->status_string(status) + ")";
}

}  // namespace pock::cuda
