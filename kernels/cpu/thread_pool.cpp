#include "kernels/cpu/thread_pool.hpp"

namespace pock::cpu {

#ifdef POCK_CPU_HAS_THREAD_POOL
namespace {

// Lives until the process exits: XNNPACK operators of engines still open may run on it.
pthreadpool_t shared_pool() {
  static pthreadpool_t pool = pthreadpool_create(0);  // 0: one thread per logical core
  return pool;
}

}  // namespace

pthreadpool_t thread_pool_for(int32_t num_threads) {
  if (num_threads == 1) return nullptr;
  pthreadpool_t pool = shared_pool();
  // A pool of one thread only adds hand-off latency.
  return pool && pthreadpool_get_threads_count(pool) > 1 ? pool : nullptr;
}

size_t thread_count(pthreadpool_t pool) { return pool ? pthreadpool_get_threads_count(pool) : 1; }
#else
pthreadpool_t thread_pool_for(int32_t) { return nullptr; }
size_t thread_count(pthreadpool_t) { return 1; }
#endif

size_t balanced_tile(pthreadpool_t pool, size_t n, size_t min_tile) {
  const size_t threads = thread_count(pool);
  if (threads <= 1) return n > 0 ? n : 1;
  const size_t tiles_wanted = threads * 4;
  const size_t tile = (n + tiles_wanted - 1) / tiles_wanted;
  return tile < min_tile ? min_tile : tile;
}

}  // namespace pock::cpu
