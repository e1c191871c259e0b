// Row-major sgemm split over the cpu backend's one thread pool, each part one single-threaded
// OpenBLAS call. OpenBLAS's own threads stay off (blas.hpp): with them, a process ran two pools
// on the same cores, and OpenBLAS's workers, spinning between GEMMs, took the cores from the
// pool's loops in between (measured on BERT at two threads: Reshape 7x, SgdUpdate 2x slower than
// at one thread, GEMMs at 1.5x instead of 1.95x). One pool hands each core one thread at a time.
#pragma once
#ifdef POCK_HAVE_OPENBLAS
#include <cstdint>

#include "kernels/cpu/thread_pool.hpp"

namespace pock::cpu {

// c[m, n] = alpha op(a) op(b) + beta c, all row-major; op transposes when the flag is set.
struct SgemmCall {
  bool transpose_a = false, transpose_b = false;
  int64_t m = 0, n = 0, k = 0;
  float alpha = 1.0f;
  const float* a = nullptr;
  int64_t lda = 0;
  const float* b = nullptr;
  int64_t ldb = 0;
  float beta = 0.0f;
  float* c = nullptr;
  int64_t ldc = 0;
};

// The call on the caller's thread alone.
void sgemm(const SgemmCall& call);

// The call split into one part per pool thread along c's longer side (rows, or columns when c is
// wide), or run whole when it is too small to pay for the hand-off. Never allocates.
void parallel_sgemm(pthreadpool_t pool, const SgemmCall& call);

// Calls sgemm over `count` independent products, products spread over the pool (each on one
// thread) when there are at least as many as threads, each split as parallel_sgemm otherwise.
// call_of(i) returns the i-th product.
template <typename CallOf>
void parallel_sgemm_batch(pthreadpool_t pool, int64_t count, const CallOf& call_of) {
  if (count <= 0) return;
  const size_t threads = thread_count(pool);
  if (threads > 1 && static_cast<size_t>(count) >= threads) {
    parallel_for(pool, static_cast<size_t>(count), 1, [&](size_t begin, size_t end) {
      for (size_t i = begin; i < end; ++i) sgemm(call_of(static_cast<int64_t>(i)));
    });
    return;
  }
  for (int64_t i = 0; i < count; ++i) parallel_sgemm(pool, call_of(i));
}

}  // namespace pock::cpu
#endif
