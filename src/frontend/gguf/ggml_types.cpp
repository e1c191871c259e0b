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

// The 6-bit scale and minimum of group j (0..7) of a Q4_K block, packed in its 12 scale bytes.
void q4_k_scale_min(int j, const uint8_t* s, int* scale, int* min) {
  if (j < 4) {
    *scale = s[j] & 63;
    *min = s[j + 4] & 63;
  } else {
    *scale = (s[j + 4] & 0x0f) | ((s[j - 4] >> 6) << 4);
    *min = (s[j + 4] >> 4) | ((s[j] >> 6) << 4);
  }
}

// Q4_K: f16 d, f16 dmin, 12 scale bytes, 128 bytes of nibbles; each 64 values take 32 bytes,
// low nibbles first (group 2i), then high nibbles (group 2i + 1).
void q4_k_block(const uint8_t* p, float* y) {
  const float d = half_to_float(load_u16(p)), dmin = half_to_float(load_u16(p + 2));
  const uint8_t* scales = p + 4;
  const uint8_t* q = p + 16;
  for (int i = 0; i < 4; ++i, q += 32) {
    int sc = 0, m = 0;
    q4_k_scale_min(2 * i, scales, &sc, &m);
    const float d1 = d * static_cast<float>(sc), m1 = dmin * static_cast<float>(m);
    q4_k_scale_min(2 * i + 1, scales, &sc, &m);
    const float d2 = d * static_cast<float>(sc), m2 = dmin * static_cast<float>(m);
    for (int l = 0; l < 32; ++l) *y++ = d1 * static_cast<float>(q[l] & 0x0f) - m1;
    for (int l = 0; l < 32; ++l) *y++ = d2 * static_cast<float>(q[l] >> 4) - m2;
  }
}

// Q6_K: 128 bytes of low 4 bits, 64 bytes of high 2 bits, 16 int8 scales, f16 d; each half of the
// block (128 values) interleaves four runs of 32.
void q6_k_block(const uint8_t* p, float* y) {
  const uint8_t* ql = p;
  const uint8_t* qh = p + 128;
  const int8_t* sc = reinterpret_cast<const int8_t*>(p + 192);
  const float d = half_to_float(load_u16(p + 208));
  for (int half = 0; half < 2; ++half, y += 128, ql += 64, qh += 32, sc += 8) {
    for (int l = 0; l < 32; ++l) {
      const int is = l / 16;
      const int q1 = ((ql[l] & 0x0f) | (((qh[l] >> 0) & 3) << 4)) - 32;
      const int q2 = ((ql[l + 32] & 0x0f) | (((qh[l] >> 2) & 3) << 4)) - 32;
      const int q3 = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
      const int q4 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
      y[l] = d * static_cast<float>(sc[is]) * static_cast<float>(q1);
      y[l + 32] = d * static_cast<float>(sc[is + 2]) * static_cast<float>(q2);
      y[l + 64] = d * static_cast<float>(sc[is + 4]) * static_cast<float>(q3);
      y[l + 96] = d * static_cast<float>(sc[is + 6]) * static_cast<float>(q4);
    }
  }
}

}  // namespace

bool block_layout(uint32_t type, uint64_t* values, uint64_t* bytes) {
  switch (type) {
    case kF32: *values = 1; *bytes = 4; return true;
    case kF16: case kBF16: *values = 1; *bytes = 2; return true;
    case kQ8_0: *values = 32; *bytes = 2 + 32; return true;
    case kQ4_0: *values = 32; *bytes = 2 + 16; return true;
    case kQ4_1: *values = 32; *bytes = 2 + 2 + 16; return true;
    case kQ4_K: *values = 256; *bytes = 2 + 2 + 12 + 128; return true;
    case kQ6_K: *values = 256; *bytes = 128 + 64 + 16 + 2; return true;
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
    case kQ4_K: return "Q4_K";
    case kQ6_K: return "Q6_K";
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
      case kQ4_K: q4_k_block(p, y); break;
      case kQ6_K: q6_k_block(p, y); break;
      default: break;
    }
  }
  return Status::ok();
}

}  // namespace pock::gguf
