// The fused activation of Conv2d / Linear on the cpu backend (parsed by kernels/params, see
// ir/activation.hpp). Kernels apply it to each finished block of output while the block is still
// in cache, so a fused op costs one pass less over memory than the separate Relu would.
#pragma once
#include <cstdint>

#include "ir/activation.hpp"

namespace pock::cpu {

// The activation as a clamp [lo, hi], for kernels that fold it into their own loops; they write
// it as two selects so that NaN passes through, as the activation kernels let it.
struct Clamp {
  float lo, hi;
};

inline Clamp clamp_of(Activation a) {
  switch (a) {
    case Activation::kRelu: return {0.0f, __builtin_inff()};
    case Activation::kRelu6: return {0.0f, 6.0f};
    case Activation::kNone: break;
  }
  return {-__builtin_inff(), __builtin_inff()};
}

// y[i] = activation(y[i]) over n elements; vectorized, same values as the Relu / Relu6 kernels.
void apply_activation_inplace(Activation activation, float* y, int64_t n);

// Channels-last rows: y[r, c] = activation(y[r, c] + bias[c]) over `rows` rows of `width`
// channels; bias may be null. The NHWC convolutions' epilogue.
void apply_bias_activation_rows(float* y, const float* bias, Activation activation, int64_t rows, int64_t width);

}  // namespace pock::cpu
