#include "kernels/cpu/parallel_sgemm.hpp"

#ifdef POCK_HAVE_OPENBLAS
#include <algorithm>

#include "kernels/cpu/blas.hpp"

namespace pock::cpu {
namespace {

// Below about this many multiply-adds (some tens of microseconds on one core) waking another
// thread costs more than it saves.
constexpr int64_t kMinParallelMacs = int64_t{1} << 19;
// Parts are whole multiples of the widest AVX-512 microkernel edge, so no part ends in a ragged
// tile that a single call would not have had.
constexpr int64_t kPartAlign = 16;

// Rows [begin, end) of c.
SgemmCall rows_of(const SgemmCall& call, int64_t begin, int64_t end) {
  SgemmCall part = call;
  part.m = end - begin;
  part.a = call.transpose_a ? call.a + begin : call.a + begin * call.lda;
  part.c = call.c + begin * call.ldc;
  return part;
}

// Columns [begin, end) of c.
SgemmCall columns_of(const SgemmCall& call, int64_t begin, int64_t end) {
  SgemmCall part = call;
  part.n = end - begin;
  part.b = call.transpose_b ? call.b + begin * call.ldb : call.b + begin;
  part.c = call.c + begin;
  return part;
}

// Where the callers split work over the pool, OpenBLAS must not thread itself as well. Set here,
// where every cpu sgemm passes, so that no kernel's prepare can forget it (blas.hpp's
// configure_blas_threads keeps the per-op setting of builds without a pool).
void keep_blas_single_threaded() {
#ifdef POCK_CPU_HAS_THREAD_POOL
  static const bool once = (openblas_set_num_threads(1), true);
  (void)once;
#endif
}

}  // namespace

void sgemm(const SgemmCall& c) {
  if (c.m <= 0 || c.n <= 0) return;
  keep_blas_single_threaded();
  cblas_sgemm(CblasRowMajor, c.transpose_a ? CblasTrans : CblasNoTrans, c.transpose_b ? CblasTrans : CblasNoTrans,
              static_cast<int>(c.m), static_cast<int>(c.n), static_cast<int>(c.k), c.alpha, c.a,
              static_cast<int>(std::max<int64_t>(c.lda, 1)), c.b, static_cast<int>(std::max<int64_t>(c.ldb, 1)),
              c.beta, c.c, static_cast<int>(std::max<int64_t>(c.ldc, 1)));
}

void parallel_sgemm(pthreadpool_t pool, const SgemmCall& call) {
  const int64_t threads = static_cast<int64_t>(thread_count(pool));
  const bool by_rows = call.m >= call.n;
  const int64_t side = by_rows ? call.m : call.n;
  if (threads <= 1 || call.m * call.n * std::max<int64_t>(call.k, 1) < kMinParallelMacs || side < 2 * kPartAlign) {
    sgemm(call);
    return;
  }
  const int64_t per_part = (side + threads - 1) / threads;
  const int64_t part = (per_part + kPartAlign - 1) / kPartAlign * kPartAlign;
  const size_t parts = static_cast<size_t>((side + part - 1) / part);
  parallel_for(pool, parts, 1, [&](size_t begin, size_t end) {
    for (size_t p = begin; p < end; ++p) {
      const int64_t lo = static_cast<int64_t>(p) * part, hi = std::min(side, lo + part);
      sgemm(by_rows ? rows_of(call, lo, hi) : columns_of(call, lo, hi));
    }
  });
}

}  // namespace pock::cpu
#endif
