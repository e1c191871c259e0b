// Eight floats as a GCC vector, for kernels that keep explicit register tiles or lane sums: the
// compiler maps it to one AVX register, two SSE or NEON registers, in each clone of a
// POCK_SIMD_CLONES function (simd.hpp). The helpers are always inlined into their clone, so no
// call passes a Vec8 across an ABI; a file that defines its own helpers returning Vec8 silences
// GCC's -Wpsabi note for the baseline clone as this header does.
#pragma once
#include <cstring>

#include "kernels/cpu/simd.hpp"

namespace pock::cpu::simd {

using Vec8 = float __attribute__((vector_size(32)));

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"
POCK_SIMD_INLINE Vec8 load8(const float* p) {
  Vec8 v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
POCK_SIMD_INLINE void store8(float* p, Vec8 v) { std::memcpy(p, &v, sizeof v); }
POCK_SIMD_INLINE Vec8 splat8(float f) { return Vec8{} + f; }
// max(lo, min(hi, v)) lane by lane; a NaN lane stays NaN, as through the activation kernels.
POCK_SIMD_INLINE Vec8 clamp8(Vec8 v, Vec8 lo, Vec8 hi) {
  v = v < lo ? lo : v;
  return v > hi ? hi : v;
}
// The sum of the eight lanes, pairwise.
POCK_SIMD_INLINE float lane_sum8(Vec8 v) { return ((v[0] + v[4]) + (v[1] + v[5])) + ((v[2] + v[6]) + (v[3] + v[7])); }
#pragma GCC diagnostic pop

}  // namespace pock::cpu::simd
