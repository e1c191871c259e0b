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

}  // namespace pock::cpu
