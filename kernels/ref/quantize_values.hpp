// Reading and writing the elements of ONNX's quantized tensors, shared by the reference kernels of
// the quantize and quantize_conv families: one definition of rounding and saturation.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "pock/types.hpp"
#include "runtime/kernel.hpp"

namespace pock::ref {

// Element i of a u8 / i8 / i32 tensor, widened.
inline int32_t integer_at(const pock_tensor_desc& t, int64_t i) {
  switch (static_cast<DType>(t.dtype)) {
    case DType::kU8: return static_cast<const uint8_t*>(t.data)[i];
    case DType::kI8: return static_cast<const int8_t*>(t.data)[i];
    default: return static_cast<const int32_t*>(t.data)[i];
  }
}

// round_half_even(v) + zero_point, saturated into u8 or i8 and stored at element i. std::nearbyint
// rounds half to even in the default rounding mode, as ONNX specifies.
inline void store_saturated(const pock_tensor_desc& t, int64_t i, float v, int32_t zero_point) {
  const float q = std::nearbyint(v) + static_cast<float>(zero_point);
  if (static_cast<DType>(t.dtype) == DType::kU8) {
    static_cast<uint8_t*>(t.data)[i] = static_cast<uint8_t>(std::clamp(q, 0.0f, 255.0f));
  } else {
    static_cast<int8_t*>(t.data)[i] = static_cast<int8_t>(std::clamp(q, -128.0f, 127.0f));
  }
}

}  // namespace pock::ref
