#include "kernels/cpu/dnnl_threads.hpp"

#ifdef POCK_HAVE_DNNL
#include <dlfcn.h>
#endif

namespace pock::cpu {

void set_dnnl_threads(int threads) {
#ifdef POCK_HAVE_DNNL
  // libdnnl brings libgomp into the process; asking for the function by name spares pock_runtime
  // -fopenmp, which would turn on OpenMP pragmas elsewhere in the backend.
  using SetThreads = void (*)(int);
  static const auto set = reinterpret_cast<SetThreads>(dlsym(RTLD_DEFAULT, "omp_set_num_threads"));
  if (set && threads > 0) set(threads);
#else
  (void)threads;
#endif
}

}  // namespace pock::cpu
