// The ggml tensor types a GGUF checkpoint stores, their block layouts, and their conversion to
// f32. Quantized types store blocks of 32 values: Q8_0 an f16 scale and 32 int8 (x = d q);
// Q4_0 an f16 scale and 32 4-bit values (x = d (q - 8)); Q4_1 f16 scale and minimum and 32 4-bit
// values (x = d q + m). The low nibbles of a block's 16 bytes are its first 16 values.
// K-quants store super-blocks of 256 values: Q4_K eight 32-value groups of 4-bit values, each
// with a 6-bit scale and minimum scaled by the block's f16 d and dmin (x = d sc q - dmin m); Q6_K
// sixteen 16-value groups of 6-bit values (low 4 bits and high 2 bits apart) with int8 scales
// (x = d sc (q - 32)).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/block_format.hpp"
#include "pock/status.hpp"

namespace pock::gguf {

enum GgmlType : uint32_t {
  kF32 = 0,
  kF16 = 1,
  kQ4_0 = 2,
  kQ4_1 = 3,
  kQ8_0 = 8,
  kQ4_K = 12,
  kQ6_K = 14,
  kBF16 = 30,
};

// Values per block and bytes per block of `type`; false for a type this reader does not convert.
bool block_layout(uint32_t type, uint64_t* values_per_block, uint64_t* bytes_per_block);
std::string type_name(uint32_t type);
// The block types a kernel can run without dequantizing first (ir/block_format.hpp, which also
// decodes them for to_f32); nullopt for F32, F16, BF16.
std::optional<BlockFormat> block_format_of(uint32_t type);

// `elements` values of `type` from `data` (elements a multiple of the block size; the caller
// checked the byte range) into `out`.
Status to_f32(uint32_t type, const uint8_t* data, uint64_t elements, float* out);

}  // namespace pock::gguf
