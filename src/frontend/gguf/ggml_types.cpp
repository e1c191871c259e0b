#include "frontend/gguf/ggml_types.hpp"

#include <cstring>

#include "ir/float16.hpp"

namespace pock::gguf {
namespace {

uint16_t load_u16(const uint8_t* p) { return static_cast<uint16_t>(p[0] | (p[1] << 8)); }

}  // namespace

std::optional<BlockFormat> block_format_of(uint32_t type) {
  switch (type) {
    case kQ8_0: return BlockFormat::kQ8_0;
    case kQ4_0: return BlockFormat::kQ4_0;
    case kQ4_1: return BlockFormat::kQ4_1;
    case kQ4_K: return BlockFormat::kQ4_K;
    case kQ6_K: return BlockFormat::kQ6_K;
    default: return std::nullopt;
  }
}

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
  if (const std::optional<BlockFormat> format = block_format_of(type)) {
    decode_blocks(*format, data, static_cast<int64_t>(blocks), out);
    return Status::ok();
  }
  for (uint64_t b = 0; b < blocks; ++b) {
    const uint8_t* p = data + b * block_bytes;
    float* y = out + b * per_block;
    switch (type) {
      case kF32: std::memcpy(y, p, 4); break;
      case kF16: *y = half_to_float(load_u16(p)); break;
      case kBF16: *y = bf16_to_float(load_u16(p)); break;
      default: break;
    }
  }
  return Status::ok();
}

}  // namespace pock::gguf
