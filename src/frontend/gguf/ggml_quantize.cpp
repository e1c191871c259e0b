#include "frontend/gguf/ggml_quantize.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "frontend/gguf/ggml_types.hpp"
#include "ir/float16.hpp"

namespace pock::gguf {
namespace {

constexpr int kBlock = 32;

void store_u16(uint8_t* p, uint16_t v) {
  p[0] = static_cast<uint8_t>(v & 0xff);
  p[1] = static_cast<uint8_t>(v >> 8);
}

// The reciprocal used to scale a block; an all-zero block has scale 0 and quantizes to zeros.
float inverse(float d) { return d != 0.0f ? 1.0f / d : 0.0f; }

void q8_0_block(const float* x, uint8_t* out) {
  float amax = 0.0f;
  for (int j = 0; j < kBlock; ++j) amax = std::max(amax, std::fabs(x[j]));
  const float d = amax / 127.0f, id = inverse(d);
  store_u16(out, float_to_half(d));
  for (int j = 0; j < kBlock; ++j) out[2 + j] = static_cast<uint8_t>(static_cast<int8_t>(std::lround(x[j] * id)));
}

// Value j and j + 16 share byte j: low nibble, high nibble.
void pack_nibbles(const int* q, uint8_t* out) {
  for (int j = 0; j < kBlock / 2; ++j) out[j] = static_cast<uint8_t>(q[j] | (q[j + kBlock / 2] << 4));
}

void q4_0_block(const float* x, uint8_t* out) {
  float amax = 0.0f, signed_max = 0.0f;
  for (int j = 0; j < kBlock; ++j) {
    if (std::fabs(x[j]) > amax) {
      amax = std::fabs(x[j]);
      signed_max = x[j];
    }
  }
  // The extreme value lands on -8, the end of the 4-bit range with one more step.
  const float d = signed_max / -8.0f, id = inverse(d);
  store_u16(out, float_to_half(d));
  int q[kBlock];
  for (int j = 0; j < kBlock; ++j) q[j] = std::clamp(static_cast<int>(std::floor(x[j] * id + 8.5f)), 0, 15);
  pack_nibbles(q, out + 2);
}

void q4_1_block(const float* x, uint8_t* out) {
  const auto [lo, hi] = std::minmax_element(x, x + kBlock);
  const float d = (*hi - *lo) / 15.0f, id = inverse(d);
  store_u16(out, float_to_half(d));
  store_u16(out + 2, float_to_half(*lo));
  int q[kBlock];
  for (int j = 0; j < kBlock; ++j) q[j] = std::clamp(static_cast<int>(std::floor((x[j] - *lo) * id + 0.5f)), 0, 15);
  pack_nibbles(q, out + 4);
}

}  // namespace

bool can_quantize(uint32_t type) {
  return type == kF32 || type == kF16 || type == kBF16 || type == kQ8_0 || type == kQ4_0 || type == kQ4_1;
}

Result<std::vector<uint8_t>> from_f32(uint32_t type, const float* values, uint64_t elements) {
  uint64_t per_block = 0, block_bytes = 0;
  if (!can_quantize(type) || !block_layout(type, &per_block, &block_bytes)) {
    return Status(Code::kUnsupportedOp, "GGUF: cannot write tensors of type " + type_name(type) +
                                            " (F32, F16, BF16, Q8_0, Q4_0, Q4_1)");
  }
  if (elements % per_block != 0) {
    return Status(Code::kInvalidArgument, "GGUF: " + std::to_string(elements) + " values are not whole " +
                                              type_name(type) + " blocks of " + std::to_string(per_block));
  }
  std::vector<uint8_t> out(static_cast<size_t>(elements / per_block * block_bytes));
  uint8_t* o = out.data();
  for (uint64_t i = 0; i < elements / per_block; ++i, o += block_bytes) {
    const float* x = values + i * per_block;
    switch (type) {
      case kF32: std::memcpy(o, x, 4); break;
      case kF16: store_u16(o, float_to_half(*x)); break;
      case kBF16: store_u16(o, float_to_bf16(*x)); break;
      case kQ8_0: q8_0_block(x, o); break;
      case kQ4_0: q4_0_block(x, o); break;
      case kQ4_1: q4_1_block(x, o); break;
    }
  }
  return out;
}

}  // namespace pock::gguf
