#include "kernels/cpu/activation_epilogue.hpp"

#include "kernels/cpu/simd.hpp"

namespace pock::cpu {

// The expressions of elementwise.cpp's unary_loop: NaN fails every comparison and passes through.
POCK_SIMD_CLONES void apply_activation_inplace(Activation activation, float* y, int64_t n) {
  switch (activation) {
    case Activation::kRelu:
#pragma omp simd
      for (int64_t i = 0; i < n; ++i) y[i] = y[i] < 0.0f ? 0.0f : y[i];
      break;
    case Activation::kRelu6:
#pragma omp simd
      for (int64_t i = 0; i < n; ++i) y[i] = y[i] < 0.0f ? 0.0f : (y[i] > 6.0f ? 6.0f : y[i]);
      break;
    case Activation::kNone: break;
  }
}

POCK_SIMD_CLONES void apply_bias_activation_rows(float* y, const float* bias, Activation activation, int64_t rows,
                                                 int64_t width) {
  const Clamp clamp = clamp_of(activation);
  const float lo = clamp.lo, hi = clamp.hi;
  for (int64_t r = 0; r < rows; ++r, y += width) {
    if (bias) {
#pragma omp simd
      for (int64_t c = 0; c < width; ++c) {
        const float v = y[c] + bias[c];
        const float above = v < lo ? lo : v;
        y[c] = above > hi ? hi : above;
      }
    } else {
#pragma omp simd
      for (int64_t c = 0; c < width; ++c) {
        const float above = y[c] < lo ? lo : y[c];
        y[c] = above > hi ? hi : above;
      }
    }
  }
}

}  // namespace pock::cpu
