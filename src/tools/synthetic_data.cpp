#include "tools/synthetic_data.hpp"
#include "ir/splitmix64.hpp"

#include <cstring>

namespace pock::tools {
namespace {


float unit_value(uint64_t* state) { return static_cast<float>(splitmix64_next(*state) >> 40) / static_cast<float>(1 << 23) - 1.0f; }

// f16 / bf16 bit patterns of small values in [-1, 1): exponent below the bias, random mantissa.
uint16_t half_bits(uint64_t* state, bool bfloat) {
  const uint64_t r = splitmix64_next(*state);
  const uint16_t sign = static_cast<uint16_t>((r & 1) << 15);
  if (bfloat) return static_cast<uint16_t>(sign | (0x3E00 + ((r >> 8) & 0x00FF)));  // about 0.125 .. 0.5
  return static_cast<uint16_t>(sign | (0x3400 + ((r >> 8) & 0x03FF)));              // about 0.25 .. 0.5
}

}  // namespace

void fill_synthetic(DType dtype, void* data, size_t nbytes, uint64_t seed) {
  if (!data || nbytes == 0) return;
  uint64_t state = seed;
  switch (dtype) {
    case DType::kF32: {
      auto* v = static_cast<float*>(data);
      for (size_t i = 0; i < nbytes / sizeof(float); ++i) v[i] = unit_value(&state);
      return;
    }
    case DType::kF16:
    case DType::kBF16: {
      auto* v = static_cast<uint16_t*>(data);
      for (size_t i = 0; i < nbytes / sizeof(uint16_t); ++i) v[i] = half_bits(&state, dtype == DType::kBF16);
      return;
    }
    default: std::memset(data, 0, nbytes); return;
  }
}

}  // namespace pock::tools
