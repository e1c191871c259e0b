// Replaces glibc's malloc family in the test binary that includes this header, so that a test can
// count every heap allocation made while some code runs — including those of XNNPACK and OpenBLAS,
// which call malloc, not operator new (support/counting_new.hpp sees only the latter). Include it
// from exactly one source file of a binary: the replacements are definitions. Where malloc cannot
// be replaced (not glibc, or a sanitizer owns it) POCK_COUNT_MALLOC stays undefined and a test
// should say that it skipped.
#pragma once
#include <atomic>
#include <cerrno>
#include <cstddef>

#if defined(__GLIBC__) && !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
#define POCK_COUNT_MALLOC 1
#endif

namespace pock::test {

inline std::atomic<bool> g_counting_mallocs{false};
inline std::atomic<long> g_mallocs{0};

inline void count_malloc() {
  if (g_counting_mallocs.load(std::memory_order_relaxed)) g_mallocs.fetch_add(1, std::memory_order_relaxed);
}

// The malloc-family calls made while `fn` runs.
template <typename Fn>
long mallocs_during(Fn&& fn) {
  g_mallocs = 0;
  g_counting_mallocs = true;
  fn();
  g_counting_mallocs = false;
  return g_mallocs.load();
}

}  // namespace pock::test

#ifdef POCK_COUNT_MALLOC
extern "C" {
void* __libc_malloc(size_t size);
void* __libc_calloc(size_t n, size_t size);
void* __libc_realloc(void* p, size_t size);
void* __libc_memalign(size_t alignment, size_t size);
void __libc_free(void* p);

void* malloc(size_t size) {
  pock::test::count_malloc();
  return __libc_malloc(size);
}
void* calloc(size_t n, size_t size) {
  pock::test::count_malloc();
  return __libc_calloc(n, size);
}
void* realloc(void* p, size_t size) {
  pock::test::count_malloc();
  return __libc_realloc(p, size);
}
void* memalign(size_t alignment, size_t size) {
  pock::test::count_malloc();
  return __libc_memalign(alignment, size);
}
void* aligned_alloc(size_t alignment, size_t size) {
  pock::test::count_malloc();
  return __libc_memalign(alignment, size);
}
int posix_memalign(void** out, size_t alignment, size_t size) {
  pock::test::count_malloc();
  void* p = __libc_memalign(alignment, size);
  if (!p) return ENOMEM;
  *out = p;
  return 0;
}
void free(void* p) { __libc_free(p); }
}
#endif
