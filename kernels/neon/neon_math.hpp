// Transcendental functions on four f32 lanes, the NEON twins of kernels/cpu/simd.hpp's scalar
// polynomials (same constants, same clamps), so that the cpu and neon backends agree to the ulp
// and both stay within a few ulp of ref. NaN propagates: NEON's min/max return NaN for a NaN
// operand, so a NaN input never becomes a clamp bound.
#pragma once
#include <arm_neon.h>

namespace pock::neon {

// exp(x) (Cephes expf): x = n ln2 + r, |r| <= ln2/2, a degree-6 polynomial for exp(r) and 2^n
// built in the exponent bits. Clamped to the finite range: below -87.3 gives the smallest normal,
// above 88.37 saturates near FLT_MAX.
inline float32x4_t exp(float32x4_t x) {
  x = vminq_f32(vmaxq_f32(x, vdupq_n_f32(-87.3f)), vdupq_n_f32(88.37f));
  const float32x4_t n = vrndnq_f32(vmulq_n_f32(x, 1.44269504088896341f));
  float32x4_t r = vfmsq_f32(x, n, vdupq_n_f32(0.693359375f));  // ln2 split in two for exactness
  r = vfmaq_f32(r, n, vdupq_n_f32(2.12194440e-4f));
  float32x4_t p = vdupq_n_f32(1.9875691500e-4f);
  p = vfmaq_f32(vdupq_n_f32(1.3981999507e-3f), p, r);
  p = vfmaq_f32(vdupq_n_f32(8.3334519073e-3f), p, r);
  p = vfmaq_f32(vdupq_n_f32(4.1665795894e-2f), p, r);
  p = vfmaq_f32(vdupq_n_f32(1.6666665459e-1f), p, r);
  p = vfmaq_f32(vdupq_n_f32(5.0000001201e-1f), p, r);
  p = vaddq_f32(vfmaq_f32(r, vmulq_f32(p, r), r), vdupq_n_f32(1.0f));  // p r^2 + r + 1
  const int32x4_t exponent = vshlq_n_s32(vaddq_s32(vcvtq_s32_f32(n), vdupq_n_s32(127)), 23);
  return vmulq_f32(p, vreinterpretq_f32_s32(exponent));
}

inline float32x4_t sigmoid(float32x4_t x) {
  const float32x4_t one = vdupq_n_f32(1.0f);
  return vdivq_f32(one, vaddq_f32(one, exp(vnegq_f32(x))));
}

// erf(x) as Eigen's rational approximation (|x| >= 4 is +-1 in f32).
inline float32x4_t erf(float32x4_t x) {
  x = vminq_f32(vmaxq_f32(x, vdupq_n_f32(-4.0f)), vdupq_n_f32(4.0f));
  const float32x4_t x2 = vmulq_f32(x, x);
  float32x4_t p = vdupq_n_f32(-2.72614225801306e-10f);
  p = vfmaq_f32(vdupq_n_f32(2.77068142495902e-08f), p, x2);
  p = vfmaq_f32(vdupq_n_f32(-2.10102402082508e-06f), p, x2);
  p = vfmaq_f32(vdupq_n_f32(-5.69250639462346e-05f), p, x2);
  p = vfmaq_f32(vdupq_n_f32(-7.34990630326855e-04f), p, x2);
  p = vfmaq_f32(vdupq_n_f32(-2.95459980854025e-03f), p, x2);
  p = vfmaq_f32(vdupq_n_f32(-1.60960333262415e-02f), p, x2);
  float32x4_t q = vdupq_n_f32(-1.45660718464996e-05f);
  q = vfmaq_f32(vdupq_n_f32(-2.13374055278905e-04f), q, x2);
  q = vfmaq_f32(vdupq_n_f32(-1.68282697438203e-03f), q, x2);
  q = vfmaq_f32(vdupq_n_f32(-7.37332916720468e-03f), q, x2);
  q = vfmaq_f32(vdupq_n_f32(-1.42647390514189e-02f), q, x2);
  return vdivq_f32(vmulq_f32(x, p), q);
}

}  // namespace pock::neon
