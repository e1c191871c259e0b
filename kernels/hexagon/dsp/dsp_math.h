/* Float math of the DSP program. There is no libm (and no double helpers): what the kernels need
 * is written here in float, accurate to a few ulp, with Hexagon's fused multiply-add. Subnormal
 * inputs and results are flushed to zero, as the host runtime runs its own kernels
 * (src/runtime/denormals.hpp), so both sides see the same tiny values. */
#ifndef HX_DSP_MATH_H_
#define HX_DSP_MATH_H_

#include <stdint.h>

float fmaf(float a, float b, float c); /* one rounding: Hexagon's sfmpy accumulate */
float hx_sqrtf(float x);
float hx_expf(float x);
float hx_expm1f(float x);
float hx_tanhf(float x);
float hx_erff(float x);
float hx_cospif(float x); /* cos(pi x) for x in [0, 1] */
float hx_sigmoidf(float x);
int hx_isfinite(float x);

/* Unsigned 32-bit division: Hexagon has no divide instruction, and there is no compiler-rt. */
uint32_t hx_udiv(uint32_t n, uint32_t d);

static inline uint32_t hx_bits(float f) {
  union { float f; uint32_t u; } v;
  v.f = f;
  return v.u;
}
static inline float hx_float(uint32_t u) {
  union { float f; uint32_t u; } v;
  v.u = u;
  return v.f;
}

#endif
