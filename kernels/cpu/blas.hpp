// OpenBLAS as the cpu backend uses it: cblas plus its process-wide thread setting.
#pragma once
#ifdef POCK_HAVE_OPENBLAS
#include <cblas.h>

#include <cstdint>

// Declared here as well because Debian's cblas.h may be netlib's (an alternatives symlink).
extern "C" void openblas_set_num_threads(int num_threads);
extern "C" int openblas_get_num_procs(void);

namespace pock::cpu {

// OpenBLAS keeps its own threads, configured for the whole process: the engine gives every op of
// an engine the same num_threads (0 = every core), so setting it at each prepare is idempotent.
inline void configure_blas_threads(int32_t num_threads) {
  openblas_set_num_threads(num_threads > 0 ? num_threads : openblas_get_num_procs());
}

// cblas takes sizes and leading dimensions as int.
inline bool fits_blas_int(int64_t v) { return v >= 0 && v <= (int64_t{1} << 31) - 1; }

}  // namespace pock::cpu
#endif
