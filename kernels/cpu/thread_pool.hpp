// The cpu backend's one thread pool per process: XNNPACK operators run on it, and loops of the
// backend's own kernels split over it through parallel_for, so kernels never oversubscribe cores
// by each owning threads. (OpenBLAS keeps its own threads; see linalg.cpp.)
#pragma once
#include <cstddef>
#include <cstdint>

#if defined(POCK_HAVE_XNNPACK) || defined(POCK_HAVE_PTHREADPOOL)
#include <pthreadpool.h>
#define POCK_CPU_HAS_THREAD_POOL 1
#else
typedef struct pthreadpool* pthreadpool_t;  // never created: every loop runs on the caller's thread
#endif

namespace pock::cpu {

// The pool an op with `num_threads` (pock_op_desc::num_threads; 0 = every core) runs on, created on
// first use with one thread per core. nullptr means "the caller's thread only": for num_threads 1,
// or when pthreadpool is not part of the build. A pool cannot be narrowed per call, so any request
// above 1 gets the whole pool.
pthreadpool_t thread_pool_for(int32_t num_threads);

// Threads the caller may plan work for when it runs on `pool`.
size_t thread_count(pthreadpool_t pool);

// Calls body(begin, end) over [0, n) in tiles of `tile` items, on `pool` when it is not null.
// Never allocates: the body is passed by address to the pool's C callback. Workers flush denormals
// to zero as the caller does during a run (runtime/denormals.hpp). Workers yield when the
// loop is done instead of spinning: OpenBLAS's threads and the caller's next op need those cores,
// and on a loaded machine spinning workers made pooled loops slower than one thread by 10x.
template <typename Body>
void parallel_for(pthreadpool_t pool, size_t n, size_t tile, const Body& body) {
  if (n == 0) return;
  if (tile == 0) tile = 1;
#ifdef POCK_CPU_HAS_THREAD_POOL
  if (pool && n > tile) {
    pthreadpool_task_1d_tile_1d_t task = [](void* context, size_t begin, size_t count) {
      (*static_cast<const Body*>(context))(begin, begin + count);
    };
    pthreadpool_parallelize_1d_tile_1d(pool, task, const_cast<Body*>(&body), n, tile,
                                       PTHREADPOOL_FLAG_YIELD_WORKERS | PTHREADPOOL_FLAG_DISABLE_DENORMALS);
    return;
  }
#endif
  (void)pool;
  body(size_t{0}, n);
}

// A tile that gives each thread a few tiles of at least `min_tile` items: enough to balance load,
// few enough that dispatch overhead stays small next to the work.
size_t balanced_tile(pthreadpool_t pool, size_t n, size_t min_tile);

}  // namespace pock::cpu
