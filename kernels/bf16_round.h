/* bf16 operand rounding, as the GEMMs of recipe "precision": "bf16" define it (docs/ops.md):
 * each f32 operand rounds to the nearest bf16 (ties to even), the products and sums stay f32.
 * One definition in C, used by kernels/ref (the oracle) and by every backend's fallback, so that
 * a CPU without bf16 instructions makes the very operands that AVX512-BF16 hardware converts
 * (VCVTNE2PS2BF16 rounds to nearest even as well). NaN stays NaN (quiet); Inf stays Inf. */
#ifndef POCK_KERNELS_BF16_ROUND_H_
#define POCK_KERNELS_BF16_ROUND_H_
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The upper 16 bits of v rounded to nearest even, as a bf16 bit pattern. */
static inline uint16_t pock_f32_to_bf16(float v) {
  uint32_t bits;
  memcpy(&bits, &v, sizeof bits);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((bits >> 16) | 0x0040u); /* NaN: keep it quiet */
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return (uint16_t)(bits >> 16);
}

static inline float pock_bf16_to_f32(uint16_t h) {
  const uint32_t bits = (uint32_t)h << 16;
  float v;
  memcpy(&v, &bits, sizeof v);
  return v;
}

/* v rounded to the nearest bf16 value, kept as an f32. */
static inline float pock_round_bf16(float v) { return pock_bf16_to_f32(pock_f32_to_bf16(v)); }

#ifdef __cplusplus
}
#endif
#endif /* POCK_KERNELS_BF16_ROUND_H_ */
