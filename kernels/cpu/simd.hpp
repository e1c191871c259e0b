// How cpu kernels get vector code without assuming an ISA at compile time.
//
// A loop function marked POCK_SIMD_CLONES is compiled once per x86 level (AVX-512, AVX2+FMA,
// baseline SSE2) and the loader picks the best one for the running CPU through an ifunc, so one
// binary runs everywhere and still uses AVX-512 where the CPU has it. The loop bodies are plain
// C++ under `#pragma omp simd` (the sources build with -fopenmp-simd): the compiler vectorizes
// each clone to its own width. Elsewhere (aarch64: NEON is baseline) the macro is empty.
#pragma once
#include <bit>
#include <cstdint>

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define POCK_SIMD_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define POCK_SIMD_CLONES
#endif

// Helpers called from clones must be inlined into them to be vectorized at the clone's width.
#define POCK_SIMD_INLINE inline __attribute__((always_inline))

namespace pock::cpu::simd {

// c ? a : b through the bits. Written as a conditional, GCC if-converts it in a small loop but,
// inlined into a loop over a switch of many such functions (elementwise.cpp's unary ops), turns it
// into branches and leaves the whole loop scalar: Silu ran at 4.2 ns an element on AVX2.
POCK_SIMD_INLINE float select(bool c, float a, float b) {
  const uint32_t m = static_cast<uint32_t>(-static_cast<int32_t>(c));
  return std::bit_cast<float>((std::bit_cast<uint32_t>(a) & m) | (std::bit_cast<uint32_t>(b) & ~m));
}

// exp(x) in f32 to ~1 ulp (Cephes expf): x = n ln2 + r with |r| <= ln2/2, a degree-6 polynomial
// for exp(r), and 2^n built in the exponent bits. Branch-free so that it vectorizes (the selects
// become blends). Below -87.3 the result is 0, not the denormal (or smallest normal) it would
// be: a denormal costs ~100x in every later multiply — causally masked attention probabilities
// made the products that read them run at 3-6 GFLOP/s. Above 88.37 it saturates near FLT_MAX
// instead of inf. Both are far inside any tolerance of the ops that use it.
POCK_SIMD_INLINE float exp(float x) {
  const bool underflows = x < -87.3f;
  x = select(underflows, -87.3f, x);
  x = select(x > 88.37f, 88.37f, x);  // keeps n <= 127: 2^128 would be inf
  // Round to nearest by the 1.5 * 2^23 trick: std::nearbyint does not vectorize.
  const float n = (x * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
  const float r = x - n * 0.693359375f + n * 2.12194440e-4f;  // ln2 split in two for exactness
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  // NaN passes the clamps above; converting it to int is undefined, so 0 stands in (p is NaN).
  const float n_finite = select(n == n, n, 0.0f);
  const float e = p * std::bit_cast<float>((static_cast<int32_t>(n_finite) + 127) << 23);
  return select(underflows, 0.0f, e);
}

POCK_SIMD_INLINE float sigmoid(float x) { return 1.0f / (1.0f + exp(-x)); }

// log(u) for u in [1, 2] (Cephes logf's polynomial): what softplus needs, log(1 + e^-|x|), with
// no exponent extraction. The mantissa is kept in [sqrt(1/2), sqrt(2)) as Cephes keeps it.
POCK_SIMD_INLINE float log_1_to_2(float u) {
  const bool halve = u > 1.41421356f;
  const float f = select(halve, 0.5f * u, u) - 1.0f;
  const float z = f * f;
  float y = 7.0376836292e-2f;
  y = y * f - 1.1514610310e-1f;
  y = y * f + 1.1676998740e-1f;
  y = y * f - 1.2420140846e-1f;
  y = y * f + 1.4249322787e-1f;
  y = y * f - 1.6668057665e-1f;
  y = y * f + 2.0000714765e-1f;
  y = y * f - 2.4999993993e-1f;
  y = y * f + 3.3333331174e-1f;
  y = y * f * z - 0.5f * z;
  const float e = select(halve, 1.0f, 0.0f);
  return f + y + e * -2.12194440e-4f + e * 0.693359375f;
}

// log(1 + e^x) = max(x, 0) + log(1 + e^-|x|): no overflow, and NaN passes through.
POCK_SIMD_INLINE float softplus(float x) {
  const float ax = select(x < 0.0f, -x, x);
  return select(x > 0.0f, x, 0.0f) + log_1_to_2(1.0f + exp(-ax));
}

// tanh(softplus(x)) = n / (n + 2), n = e^x (e^x + 2): exp only. Past x = 20 the ratio is 1 in
// f32, and clamping there keeps n finite.
POCK_SIMD_INLINE float tanh_softplus(float x) {
  const float e = exp(select(x > 20.0f, 20.0f, x));
  const float n = e * (e + 2.0f);
  return n / (n + 2.0f);
}

// erf(x) as Eigen's rational approximation (a few ulp; |x| >= 4 is +-1 in f32).
POCK_SIMD_INLINE float erf(float x) {
  x = select(x < -4.0f, -4.0f, x);
  x = select(x > 4.0f, 4.0f, x);
  const float x2 = x * x;
  float p = -2.72614225801306e-10f;
  p = p * x2 + 2.77068142495902e-08f;
  p = p * x2 - 2.10102402082508e-06f;
  p = p * x2 - 5.69250639462346e-05f;
  p = p * x2 - 7.34990630326855e-04f;
  p = p * x2 - 2.95459980854025e-03f;
  p = p * x2 - 1.60960333262415e-02f;
  float q = -1.45660718464996e-05f;
  q = q * x2 - 2.13374055278905e-04f;
  q = q * x2 - 1.68282697438203e-03f;
  q = q * x2 - 7.37332916720468e-03f;
  q = q * x2 - 1.42647390514189e-02f;
  return x * p / q;
}

POCK_SIMD_INLINE float min(float a, float b) { return a < b ? a : b; }
POCK_SIMD_INLINE float max(float a, float b) { return a > b ? a : b; }

}  // namespace pock::cpu::simd
