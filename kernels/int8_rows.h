/* Symmetric int8 quantization of one row, as LinearInt8 and LinearInt8InputGrad define it
 * (docs/ops.md). One definition in C, included by kernels/ref and by the Hexagon DSP program, so
 * that every backend makes the same integers: IEEE single multiplies and adds, and a division
 * that is correctly rounded on every target (the DSP's helper is bit-exact with x86's).
 *   amax = max |v|;  q = round_half_away(v * (127 / amax)), |q| <= 127;  returns amax / 127.
 * An all-zero row gives q = 0 and scale 0. A row holding NaN or Inf gives q = 0 and a NaN scale,
 * so that whatever the row feeds becomes NaN and a training step fails as numerical. */
#ifndef POCK_KERNELS_INT8_ROWS_H_
#define POCK_KERNELS_INT8_ROWS_H_
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

static inline float pock_quantize_row_i8(const float* v, uint32_t n, int8_t* q) {
#ifdef __clang__
#pragma STDC FP_CONTRACT OFF /* v * inv + 0.5 must round twice, as on every backend */
#endif
  float amax = 0.0f;
  int finite = 1;
  for (uint32_t i = 0; i < n; ++i) {
    const float a = v[i] < 0.0f ? -v[i] : v[i];
    if (!(a <= 3.402823466e38f)) finite = 0; /* NaN or Inf */
    else if (a > amax) amax = a;
  }
  if (!finite || amax == 0.0f) {
    for (uint32_t i = 0; i < n; ++i) q[i] = 0;
    return finite ? 0.0f : __builtin_nanf("");
  }
  const float inv = 127.0f / amax;
  for (uint32_t i = 0; i < n; ++i) {
    float t = v[i] * inv;
    t = t > 127.0f ? 127.0f : (t < -127.0f ? -127.0f : t);
    q[i] = (int8_t)(t >= 0.0f ? (int32_t)(t + 0.5f) : -(int32_t)(0.5f - t));
  }
  return amax / 127.0f;
}

#ifdef __cplusplus
}
#endif
#endif /* POCK_KERNELS_INT8_ROWS_H_ */
