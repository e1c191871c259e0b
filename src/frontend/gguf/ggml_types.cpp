#include "frontend/gguf/ggml_types.hpp"

#include <cstring>

namespace pock::gguf {
namespace {

float half_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
  uint32_t exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff, bits = 0;
  if (exponent == 0x1f) {
    bits = sign | 0x7f800000u | (mantissa << 13);  // Inf, NaN
  } else if (exponent != 0) {
    bits = sign | ((exponent + 112) << 23) | (mantissa << 13);
  } else if (mantissa != 0) {  // subnormal: normalize
    exponent = 113;
    while (!(mantissa & 0x400)) {
      mantissa <<= 1;
      --exponent;
    }
    bits = sign | (exponent << 23) | ((mantissa & 0x3ff) << 13);
  } else {
    bits = sign;
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t load_u16(const uint8_t* p) { return static_cast<uint16_t>(p[0] | (p[1] << 8)); }

}  // namespace

bool block_layout(uint32_t type, uint64_t* values, uint64_t* bytes) {
  switch (type) {
    case kF32: *values = 1; *bytes = 4; return true;
    case kF16: case kBF16: *values = 1; *bytes = 2; return true;
    case kQ8_0: *values = 32; *bytes = 2 + 32; return true;
    case kQ4_0: *values = 32; *bytes = 2 + 16; return true;
    case kQ4_1: *values = 32; *bytes = 2 + 2 + 16; return true;
    default: return false;
  }
}

std::string type_name(uint32_t type) {
  switch (type) {
    case kF32: return "F32";
    case kF16: return "F16";
    case kBF16: return "BF16";
    case kQ8_0: return "Q8_0";
    case kQ4_0: return "Q4_0";
    case kQ4_1: return "Q4_1";
    default: return "ggml type " + std::to_string(type);
  }
}

Status to_f32(uint32_t type, const uint8_t* data, uint64_t elements, float* out) {
  uint64_t per_block = 0, block_bytes = 0;
  if (!block_layout(type, &per_block, &block_bytes)) {
    return Status(Code::kUnsupportedOp, "tensor type " + type_name(type) + " is not supported");
  }
  if (elements % per_block != 0) {
    return Status(Code::kInvalidArgument, std::to_string(elements) + " values do not fill whole " + type_name(type) + " blocks");
  }
  const uint64_t blocks = elements / per_block;
  for (uint64_t b = 0; b < blocks; ++b) {
    const uint8_t* p = data + b * block_bytes;
    float* y = out + b * per_block;
    switch (type) {
      case kF32: std::memcpy(y, p, 4); break;
      case kF16: *y = half_to_float(load_u16(p)); break;
      case kBF16: {
        const uint32_t bits = static_cast<uint32_t>(load_u16(p)) << 16;
        std::memcpy(y, &bits, 4);
        break;
      }
      case kQ8_0: {
        const float d = half_to_float(load_u16(p));
        for (int i = 0; i < 32; ++i) y[i] = d * static_cast<float>(static_cast<int8_t>(p[2 + i]));
        break;
      }
      case kQ4_0: {
        const float d = half_to_float(load_u16(p));
        for (int i = 0; i < 16; ++i) {
          y[i] = d * static_cast<float>((p[2 + i] & 0x0f) - 8);
          y[i + 16] = d * static_cast<float>((p[2 + i] >> 4) - 8);
        }
        break;
      }
      case kQ4_1: {
        const float d = half_to_float(load_u16(p)), m = half_to_float(load_u16(p + 2));
        for (int i = 0; i < 16; ++i) {
          y[i] = d * static_cast<float>(p[4 + i] & 0x0f) + m;
          y[i + 16] = d * static_cast<float>(p[4 + i] >> 4) + m;
        }
        break;
      }
      default: break;
    }
  }
  return Status::ok();
}

}  // namespace pock::gguf
