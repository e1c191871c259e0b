// Per-element logic of the cuda activation_mask family (ClipMask, MaskGrad) and the f32 bounds
// that ClipMask and ClipGrad compare against. ref compares an f32 value with double bounds; the
// device compares with f32 bounds chosen so that every f32 value lands on the same side (the
// nearest f32 at or inside the double bound), so the masks agree with ref bit for bit.
#pragma once
#include <float.h>
#include <math.h>

#include <cstdint>

#include "kernels/cuda/float_map.hpp"
#include "kernels/params/elementwise.hpp"

namespace pock::cuda {

// The smallest f32 `f` such that, for every f32 x, x >= f exactly when x >= lo (x > lo when
// `strict`). NaN when no x passes.
inline float f32_lower_bound(double lo, bool strict) {
  if (lo != lo || (strict && lo == INFINITY)) return NAN;
  float f = lo > FLT_MAX ? INFINITY : (lo < -FLT_MAX ? -INFINITY : static_cast<float>(lo));
  if (strict ? static_cast<double>(f) <= lo : static_cast<double>(f) < lo) f = nextafterf(f, INFINITY);
  return f;
}

// The largest f32 `f` such that x <= f exactly when x <= hi (x < hi when `strict`).
inline float f32_upper_bound(double hi, bool strict) {
  if (hi != hi || (strict && hi == -INFINITY)) return NAN;
  float f = hi > FLT_MAX ? INFINITY : (hi < -FLT_MAX ? -INFINITY : static_cast<float>(hi));
  if (strict ? static_cast<double>(f) >= hi : static_cast<double>(f) > hi) f = nextafterf(f, -INFINITY);
  return f;
}

// Inclusive f32 bounds [lo, hi]; NaN is outside (every comparison with it is false).
struct MaskBounds {
  float lo = -INFINITY, hi = INFINITY;
  POCK_HD bool inside(float x) const { return x >= lo && x <= hi; }
};

// ClipMask: a given bound is strict unless `inclusive`; an absent one tests nothing but NaN.
inline MaskBounds clip_mask_bounds(const params::ActivationParams& p) {
  return {f32_lower_bound(p.lo, !p.inclusive && p.has_lo), f32_upper_bound(p.hi, !p.inclusive && p.has_hi)};
}

struct ClipMaskMap {
  const float* v;
  uint8_t* mask;
  MaskBounds bounds;
  POCK_HD void operator()(int64_t i) const { mask[i] = bounds.inside(v[i]) ? 1 : 0; }
};

// dy * 0 keeps a NaN or infinite dy NaN, as ref's dy * f'(v) does.
struct MaskGradMap {
  const float* dy;
  const uint8_t* mask;
  float* dx;
  POCK_HD void operator()(int64_t i) const { dx[i] = dy[i] * (mask[i] ? 1.0f : 0.0f); }
};

// Four elements a thread: one 16-byte load of floats, one 4-byte load of mask bytes. Index
// `packs + t` is the t-th of the n % 4 tail elements.
struct ClipMaskPackMap {
  ClipMaskMap scalar;
  int64_t packs;
  POCK_HD void operator()(int64_t i) const {
    if (i >= packs) return scalar(packs * 4 + (i - packs));
    const Pack4 x = reinterpret_cast<const Pack4*>(scalar.v)[i];
    uint32_t bits = 0;
    for (int j = 0; j < 4; ++j) bits |= (scalar.bounds.inside(x.v[j]) ? 1u : 0u) << (8 * j);  // little-endian bytes
    reinterpret_cast<uint32_t*>(scalar.mask)[i] = bits;
  }
};

struct MaskGradPackMap {
  MaskGradMap scalar;
  int64_t packs;
  POCK_HD void operator()(int64_t i) const {
    if (i >= packs) return scalar(packs * 4 + (i - packs));
    Pack4 g = reinterpret_cast<const Pack4*>(scalar.dy)[i];
    const uint32_t bits = reinterpret_cast<const uint32_t*>(scalar.mask)[i];
    for (int j = 0; j < 4; ++j) g.v[j] *= (bits >> (8 * j)) & 0xffu ? 1.0f : 0.0f;
    reinterpret_cast<Pack4*>(scalar.dx)[i] = g;
  }
};

// Whether the pack maps may run: floats 16-byte aligned, mask bytes 4-byte aligned.
inline bool mask_packable(const void* floats_a, const void* floats_b, const void* mask) {
  auto aligned = [](const void* p, uintptr_t a) { return reinterpret_cast<uintptr_t>(p) % a == 0; };
  return aligned(floats_a, 16) && aligned(floats_b, 16) && aligned(mask, 4);
}

}  // namespace pock::cuda
