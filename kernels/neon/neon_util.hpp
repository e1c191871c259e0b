// Helpers shared by the neon backend's kernels: the kernel score, and loops that apply a
// four-lane function to a whole array (full vectors, then the tail through a zero-padded vector,
// so that every element — tail included — goes through the same lane code).
#pragma once
#include <arm_neon.h>

#include <cstdint>
#include <cstring>

#include "runtime/kernel.hpp"

namespace pock::neon {

// Above the cpu backend's 10: on aarch64 the engine binds neon wherever it has a kernel.
constexpr int32_t kNeonScore = 20;

inline KernelDef def(const char* op, KernelFn run, bool (*accepts)(const pock_op_desc&)) {
  KernelDef d{op, DType::kF32, run, kNeonScore};
  d.accepts = accepts;
  return d;
}

// The first n (< 4) floats of p in a vector, the other lanes 0.
inline float32x4_t load_partial(const float* p, int64_t n) {
  float lanes[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  std::memcpy(lanes, p, static_cast<size_t>(n) * sizeof(float));
  return vld1q_f32(lanes);
}

inline void store_partial(float* p, float32x4_t v, int64_t n) {
  float lanes[4];
  vst1q_f32(lanes, v);
  std::memcpy(p, lanes, static_cast<size_t>(n) * sizeof(float));
}

// y[i] = f(x[i]) four lanes at a time.
template <typename F>
inline void map(const float* x, float* y, int64_t n, const F& f) {
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) vst1q_f32(y + i, f(vld1q_f32(x + i)));
  if (i < n) store_partial(y + i, f(load_partial(x + i, n - i)), n - i);
}

// y[i] = f(a[i], b[i]) four lanes at a time.
template <typename F>
inline void map(const float* a, const float* b, float* y, int64_t n, const F& f) {
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) vst1q_f32(y + i, f(vld1q_f32(a + i), vld1q_f32(b + i)));
  if (i < n) store_partial(y + i, f(load_partial(a + i, n - i), load_partial(b + i, n - i)), n - i);
}

// Lane-wise select: where mask is set, a; elsewhere b.
inline float32x4_t select(uint32x4_t mask, float32x4_t a, float32x4_t b) { return vbslq_f32(mask, a, b); }

}  // namespace pock::neon
