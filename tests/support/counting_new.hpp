// Replaces the global operator new/delete of the test binary that includes this header, so a
// test can count the heap allocations made while some code runs (the runtime promises none in a
// step). Include it from exactly one source file of a binary: the replacements are definitions.
#pragma once
#include <atomic>
#include <cstdlib>
#include <new>

namespace pock::test {

inline std::atomic<bool> g_counting_allocations{false};
inline std::atomic<long> g_allocations{0};

inline void* counted_alloc(std::size_t size, std::size_t alignment) {
  if (g_counting_allocations.load(std::memory_order_relaxed)) g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (size == 0) size = 1;
  return alignment > alignof(std::max_align_t)
             ? std::aligned_alloc(alignment, (size + alignment - 1) / alignment * alignment)
             : std::malloc(size);
}

// Counts the allocations made while `fn` runs.
template <typename Fn>
long allocations_during(Fn&& fn) {
  g_allocations = 0;
  g_counting_allocations = true;
  fn();
  g_counting_allocations = false;
  return g_allocations.load();
}

}  // namespace pock::test

void* operator new(std::size_t size) {
  if (void* p = pock::test::counted_alloc(size, 0)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t size) { return ::operator new(size); }
void* operator new(std::size_t size, const std::nothrow_t&) noexcept { return pock::test::counted_alloc(size, 0); }
void* operator new[](std::size_t size, const std::nothrow_t&) noexcept { return pock::test::counted_alloc(size, 0); }
void* operator new(std::size_t size, std::align_val_t a) {
  if (void* p = pock::test::counted_alloc(size, static_cast<std::size_t>(a))) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t size, std::align_val_t a) { return ::operator new(size, a); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
