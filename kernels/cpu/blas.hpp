// OpenBLAS as the cpu backend uses it: cblas plus its process-wide thread setting.
#pragma once
#ifdef POCK_HAVE_OPENBLAS
#include <cblas.h>

#include <cstdint>

#include "kernels/cpu/thread_pool.hpp"

// Declared here as well because Debian's cblas.h may be netlib's (an alternatives symlink).
extern "C" void openblas_set_num_threads(int num_threads);
extern "C" int openblas_get_num_procs(void);

namespace pock::cpu {

// OpenBLAS's thread setting is process-wide. Where the backend has its thread pool, GEMMs split
// over that pool (parallel_sgemm.hpp) and OpenBLAS runs each part on one thread; without a pool,
// OpenBLAS threads itself as the op asks (num_threads, 0 = every core). The engine gives every op
// the same num_threads, so calling this at each prepare is idempotent.
inline void configure_blas_threads(int32_t num_threads) {
#ifdef POCK_CPU_HAS_THREAD_POOL
  (void)num_threads;
  openblas_set_num_threads(1);
#else
  openblas_set_num_threads(num_threads > 0 ? num_threads : openblas_get_num_procs());
#endif
}

// cblas takes sizes and leading dimensions as int.
inline bool fits_blas_int(int64_t v) { return v >= 0 && v <= (int64_t{1} << 31) - 1; }

}  // namespace pock::cpu
#endif
