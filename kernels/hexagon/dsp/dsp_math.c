#include "dsp_math.h"

#define HX_INF 0x7f800000u
#define HX_NAN 0x7fc00000u

float fmaf(float a, float b, float c) {
  __asm__("%0 += sfmpy(%1, %2)" : "+r"(c) : "r"(a), "r"(b));
  return c;
}

int hx_isfinite(float x) { return (hx_bits(x) & HX_INF) != HX_INF; }

/* The helper clang calls for every float division. Mantissas in [1, 2): a reciprocal from a
 * linear start refined by three Newton steps, then the quotient corrected by its exact residual
 * (fma), which rounds it correctly (checked against x86 division on 200k random pairs). */
float __hexagon_divsf3(float n, float d) {
  const uint32_t un = hx_bits(n), ud = hx_bits(d);
  const uint32_t sign = (un ^ ud) & 0x80000000u;
  const uint32_t en = (un >> 23) & 0xff, ed = (ud >> 23) & 0xff;
  if (en == 0xff || ed == 0xff) {
    if ((en == 0xff && (un & 0x7fffff)) || (ed == 0xff && (ud & 0x7fffff))) return hx_float(HX_NAN);
    if (en == 0xff && ed == 0xff) return hx_float(HX_NAN); /* inf / inf */
    return hx_float(en == 0xff ? sign | HX_INF : sign);
  }
  if (ed == 0) return hx_float(en == 0 ? HX_NAN : sign | HX_INF); /* x / 0 (a subnormal is 0) */
  if (en == 0) return hx_float(sign);
  const float a = hx_float((un & 0x7fffff) | 0x3f800000u);
  const float b = hx_float((ud & 0x7fffff) | 0x3f800000u);
  float r = fmaf(-0.47058823529f, b, 1.41176470588f); /* 24/17 - 8/17 b */
  for (int i = 0; i < 3; ++i) r = fmaf(r, fmaf(-b, r, 1.0f), r);
  float q = a * r;
  q = fmaf(fmaf(-b, q, a), r, q); /* in (0.5, 2) */
  const uint32_t uq = hx_bits(q);
  const int32_t e = (int32_t)en - (int32_t)ed + (int32_t)((uq >> 23) & 0xff);
  if (e >= 0xff) return hx_float(sign | HX_INF);
  if (e <= 0) return hx_float(sign);
  return hx_float(sign | ((uint32_t)e << 23) | (uq & 0x7fffff));
}

uint32_t hx_udiv(uint32_t n, uint32_t d) {
  if (d == 0) return 0xffffffffu;
  uint32_t q = 0, r = 0;
  for (int i = 31; i >= 0; --i) {
    r = (r << 1) | ((n >> i) & 1u);
    if (r >= d) {
      r -= d;
      q |= 1u << i;
    }
  }
  return q;
}

/* 1/sqrt(x) from the classic bit-level guess and three Newton steps, then sqrt = x r with one
 * residual correction. */
float hx_sqrtf(float x) {
  const uint32_t u = hx_bits(x);
  if ((u & HX_INF) == 0) return hx_float(u & 0x80000000u); /* +-0 and subnormals */
  if (u & 0x80000000u) return hx_float(HX_NAN);
  if ((u & HX_INF) == HX_INF) return x; /* inf, NaN */
  float r = hx_float(0x5f3759dfu - (u >> 1));
  const float half = 0.5f * x;
  for (int i = 0; i < 3; ++i) r = r * fmaf(-half * r, r, 1.5f);
  const float s = x * r;
  return fmaf(fmaf(-s, s, x), 0.5f * r, s);
}

/* 2^n for n in [-126, 127]. */
static float pow2i(int32_t n) { return hx_float((uint32_t)(n + 127) << 23); }

/* e^r - 1 for |r| <= ln2 / 2: Taylor to r^9 (error below 1e-10). */
static float expm1_small(float r) {
  float p = 1.0f / 362880.0f;
  p = fmaf(p, r, 1.0f / 40320.0f);
  p = fmaf(p, r, 1.0f / 5040.0f);
  p = fmaf(p, r, 1.0f / 720.0f);
  p = fmaf(p, r, 1.0f / 120.0f);
  p = fmaf(p, r, 1.0f / 24.0f);
  p = fmaf(p, r, 1.0f / 6.0f);
  p = fmaf(p, r, 0.5f);
  return fmaf(p * r, r, r);
}

/* x = n ln2 + r (Cody-Waite, ln2 in two parts), e^x = 2^n e^r. */
float hx_expf(float x) {
  if (x != x) return x;
  if (x > 88.72f) return hx_float(HX_INF);
  if (x < -87.33f) return 0.0f; /* the result would be subnormal: flushed */
  const float t = x * 1.44269504f;
  const int32_t n = (int32_t)(t + (t >= 0.0f ? 0.5f : -0.5f));
  const float fn = (float)n;
  float r = fmaf(-fn, 0.693145752f, x);
  r = fmaf(-fn, 1.42860677e-6f, r);
  const float er = 1.0f + expm1_small(r);
  /* 2^n in two halves keeps n = 128 (x near 88.7) representable on the way. */
  const int32_t h = n / 2;
  return er * pow2i(h) * pow2i(n - h);
}

float hx_expm1f(float x) {
  if (x > -0.34657f && x < 0.34657f) return expm1_small(x);
  return hx_expf(x) - 1.0f;
}

/* tanh x = -expm1(-2|x|) / (2 + expm1(-2|x|)), with x's sign: no cancellation near 0. */
float hx_tanhf(float x) {
  const float a = x < 0.0f ? -x : x;
  if (!(a < 9.0f)) return x != x ? x : (x < 0.0f ? -1.0f : 1.0f);
  const float e = hx_expm1f(-2.0f * a);
  const float t = -e / (2.0f + e);
  return x < 0.0f ? -t : t;
}

float hx_sigmoidf(float x) { return 1.0f / (1.0f + hx_expf(-x)); }

/* erf: the Maclaurin series below 0.5 (relative accuracy where erf is small), Abramowitz-Stegun
 * 7.1.26 above (absolute error 1.5e-7), 1 beyond 4. */
float hx_erff(float x) {
  const float a = x < 0.0f ? -x : x;
  float y;
  if (a < 0.5f) {
    const float z = a * a;
    float p = -1.0f / 75600.0f; /* x^13/(6! 13) ... series of erf sqrt(pi)/2 */
    p = fmaf(p, z, 1.0f / 9360.0f);
    p = fmaf(p, z, -1.0f / 1320.0f);
    p = fmaf(p, z, 1.0f / 216.0f);
    p = fmaf(p, z, -1.0f / 42.0f);
    p = fmaf(p, z, 1.0f / 10.0f);
    p = fmaf(p, z, -1.0f / 3.0f);
    p = fmaf(p, z, 1.0f);
    y = 1.12837917f * a * p;
  } else if (a < 4.0f) {
    const float t = 1.0f / fmaf(0.3275911f, a, 1.0f);
    float p = 1.061405429f;
    p = fmaf(p, t, -1.453152027f);
    p = fmaf(p, t, 1.421413741f);
    p = fmaf(p, t, -0.284496736f);
    p = fmaf(p, t, 0.254829592f);
    y = 1.0f - p * t * hx_expf(-a * a);
  } else {
    y = x != x ? x : 1.0f;
  }
  return x < 0.0f ? -y : y;
}

/* cos(pi x) = -sin(pi (x - 1/2)); sin by its Taylor series to t^13 on [-pi/2, pi/2] (error 6e-9). */
float hx_cospif(float x) {
  const float t = 3.14159265f * (x - 0.5f);
  const float z = t * t;
  float p = 1.0f / 6227020800.0f;
  p = fmaf(p, -z, 1.0f / 39916800.0f);
  p = fmaf(p, -z, 1.0f / 362880.0f);
  p = fmaf(p, -z, 1.0f / 5040.0f);
  p = fmaf(p, -z, 1.0f / 120.0f);
  p = fmaf(p, -z, 1.0f / 6.0f);
  p = fmaf(p, -z, 1.0f);
  return -t * p;
}
