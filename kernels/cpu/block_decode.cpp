#include "kernels/cpu/block_decode.hpp"

#include <cstring>

#include "kernels/cpu/simd.hpp"

namespace pock::cpu {
namespace {

// IEEE half to float without branches on the common path: normal numbers by rebiasing the
// exponent in place, subnormals as m * 2^-24 (exact; no float denormal is formed, so DAZ cannot
// flush a tiny block scale), infinities and NaN by setting the exponent.
POCK_SIMD_INLINE float half_to_float_fast(const uint8_t* p) {
  const uint32_t h = static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8;
  const uint32_t sign = (h & 0x8000u) << 16, exponent = h & 0x7c00u, rest = (h & 0x7fffu) << 13;
  float magnitude;
  if (exponent == 0) {
    magnitude = static_cast<float>(h & 0x3ffu) * 0x1p-24f;
  } else {
    const uint32_t bits = exponent == 0x7c00u ? (rest | 0x7f800000u) : rest + (112u << 23);
    std::memcpy(&magnitude, &bits, 4);
  }
  uint32_t bits;
  std::memcpy(&bits, &magnitude, 4);
  bits |= sign;
  float out;
  std::memcpy(&out, &bits, 4);
  return out;
}

POCK_SIMD_CLONES void q8_0_rows(const uint8_t* src, int64_t blocks, float* out) {
  for (int64_t b = 0; b < blocks; ++b, src += 34, out += 32) {
    const float d = half_to_float_fast(src);
    const int8_t* q = reinterpret_cast<const int8_t*>(src + 2);
#pragma omp simd
    for (int i = 0; i < 32; ++i) out[i] = d * static_cast<float>(q[i]);
  }
}

POCK_SIMD_CLONES void q4_0_rows(const uint8_t* src, int64_t blocks, float* out) {
  for (int64_t b = 0; b < blocks; ++b, src += 18, out += 32) {
    const float d = half_to_float_fast(src);
    const uint8_t* q = src + 2;
#pragma omp simd
    for (int i = 0; i < 16; ++i) {
      out[i] = d * static_cast<float>(static_cast<int>(q[i] & 0x0f) - 8);
      out[i + 16] = d * static_cast<float>(static_cast<int>(q[i] >> 4) - 8);
    }
  }
}

POCK_SIMD_CLONES void q4_1_rows(const uint8_t* src, int64_t blocks, float* out) {
  for (int64_t b = 0; b < blocks; ++b, src += 20, out += 32) {
    const float d = half_to_float_fast(src), m = half_to_float_fast(src + 2);
    const uint8_t* q = src + 4;
#pragma omp simd
    for (int i = 0; i < 16; ++i) {
      out[i] = d * static_cast<float>(q[i] & 0x0f) + m;
      out[i + 16] = d * static_cast<float>(q[i] >> 4) + m;
    }
  }
}

}  // namespace

void decode_blocks_fast(BlockFormat format, const uint8_t* src, int64_t blocks, float* out) {
  switch (format) {
    case BlockFormat::kQ8_0: q8_0_rows(src, blocks, out); return;
    case BlockFormat::kQ4_0: q4_0_rows(src, blocks, out); return;
    case BlockFormat::kQ4_1: q4_1_rows(src, blocks, out); return;
    default: decode_blocks(format, src, blocks, out); return;
  }
}

}  // namespace pock::cpu
