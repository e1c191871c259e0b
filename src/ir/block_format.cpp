#include "ir/block_format.hpp"

#include "ir/float16.hpp"

namespace pock {
namespace {

float load_half(const uint8_t* p) { return half_to_float(static_cast<uint16_t>(p[0] | (p[1] << 8))); }

void q8_0_block(const uint8_t* p, float* y) {
  const float d = load_half(p);
  for (int i = 0; i < 32; ++i) y[i] = d * static_cast<float>(static_cast<int8_t>(p[2 + i]));
}

void q4_0_block(const uint8_t* p, float* y) {
  const float d = load_half(p);
  for (int i = 0; i < 16; ++i) {
    y[i] = d * static_cast<float>((p[2 + i] & 0x0f) - 8);
    y[i + 16] = d * static_cast<float>((p[2 + i] >> 4) - 8);
  }
}

void q4_1_block(const uint8_t* p, float* y) {
  const float d = load_half(p), m = load_half(p + 2);
  for (int i = 0; i < 16; ++i) {
    y[i] = d * static_cast<float>(p[4 + i] & 0x0f) + m;
    y[i + 16] = d * static_cast<float>(p[4 + i] >> 4) + m;
  }
}

// The 6-bit scale and minimum of group j (0..7) of a q4_k block, packed in its 12 scale bytes.
void q4_k_scale_min(int j, const uint8_t* s, int* scale, int* min) {
  if (j < 4) {
    *scale = s[j] & 63;
    *min = s[j + 4] & 63;
  } else {
    *scale = (s[j + 4] & 0x0f) | ((s[j - 4] >> 6) << 4);
    *min = (s[j + 4] >> 4) | ((s[j] >> 6) << 4);
  }
}

// Each 64 values take 32 bytes of nibbles: low nibbles first (group 2i), then high (group 2i + 1).
void q4_k_block(const uint8_t* p, float* y) {
  const float d = load_half(p), dmin = load_half(p + 2);
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

// Each half of the block (128 values) interleaves four runs of 32.
void q6_k_block(const uint8_t* p, float* y) {
  const uint8_t* ql = p;
  const uint8_t* qh = p + 128;
  const int8_t* sc = reinterpret_cast<const int8_t*>(p + 192);
  const float d = load_half(p + 208);
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

std::optional<BlockFormat> parse_block_format(std::string_view name) {
  for (BlockFormat f : {BlockFormat::kQ8_0, BlockFormat::kQ4_0, BlockFormat::kQ4_1, BlockFormat::kQ4_K, BlockFormat::kQ6_K}) {
    if (name == block_format_name(f)) return f;
  }
  return std::nullopt;
}

const char* block_format_name(BlockFormat format) {
  switch (format) {
    case BlockFormat::kQ8_0: return "q8_0";
    case BlockFormat::kQ4_0: return "q4_0";
    case BlockFormat::kQ4_1: return "q4_1";
    case BlockFormat::kQ4_K: return "q4_k";
    case BlockFormat::kQ6_K: return "q6_k";
  }
  return "?";
}

BlockLayout block_layout(BlockFormat format) {
  switch (format) {
    case BlockFormat::kQ8_0: return {32, 2 + 32};
    case BlockFormat::kQ4_0: return {32, 2 + 16};
    case BlockFormat::kQ4_1: return {32, 2 + 2 + 16};
    case BlockFormat::kQ4_K: return {256, 2 + 2 + 12 + 128};
    case BlockFormat::kQ6_K: return {256, 128 + 64 + 16 + 2};
  }
  return {};
}

int64_t block_row_bytes(BlockFormat format, int64_t cols) {
  const BlockLayout b = block_layout(format);
  if (cols <= 0 || b.values <= 0 || cols % b.values != 0) return -1;
  return cols / b.values * b.bytes;
}

void decode_blocks(BlockFormat format, const uint8_t* src, int64_t blocks, float* out) {
  const BlockLayout b = block_layout(format);
  for (int64_t i = 0; i < blocks; ++i, src += b.bytes, out += b.values) {
    switch (format) {
      case BlockFormat::kQ8_0: q8_0_block(src, out); break;
      case BlockFormat::kQ4_0: q4_0_block(src, out); break;
      case BlockFormat::kQ4_1: q4_1_block(src, out); break;
      case BlockFormat::kQ4_K: q4_k_block(src, out); break;
      case BlockFormat::kQ6_K: q6_k_block(src, out); break;
    }
  }
}

bool has_int8_view(BlockFormat format) {
  return format == BlockFormat::kQ8_0 || format == BlockFormat::kQ4_0 || format == BlockFormat::kQ4_1;
}

void block_int8_view(BlockFormat format, const uint8_t* src, int8_t q[32], float* d, float* m) {
  *d = load_half(src);
  *m = 0.0f;
  if (format == BlockFormat::kQ8_0) {
    for (int i = 0; i < 32; ++i) q[i] = static_cast<int8_t>(src[2 + i]);
    return;
  }
  const uint8_t* nibbles = src + 2;
  if (format == BlockFormat::kQ4_1) {
    *m = load_half(src + 2);
    nibbles = src + 4;
  } else {
    *m = -8.0f * *d;
  }
  for (int i = 0; i < 16; ++i) {
    q[i] = static_cast<int8_t>(nibbles[i] & 0x0f);
    q[i + 16] = static_cast<int8_t>(nibbles[i] >> 4);
  }
}

}  // namespace pock
