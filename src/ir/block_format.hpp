// Block-quantized weight layouts (ggml's, as GGUF files store them) and their f32 values: the one
// definition that op schemas, kernels of every backend and the GGUF importer share.
// A row of `cols` values is cols / values-per-block blocks, back to back.
//   q8_0: f16 d, 32 int8 q                        x = d q
//   q4_0: f16 d, 16 bytes of nibbles              x = d (q - 8)
//   q4_1: f16 d, f16 m, 16 bytes of nibbles       x = d q + m
//   (the low nibbles of a block's 16 bytes are its first 16 values, the high nibbles the last 16)
//   q4_k: 256 values: f16 d, f16 dmin, 12 bytes of 6-bit group scales and minimums, 128 bytes of
//         nibbles; eight 32-value groups, x = d sc q - dmin m
//   q6_k: 256 values: 128 bytes of low 4 bits, 64 of high 2 bits, 16 int8 group scales, f16 d;
//         sixteen 16-value groups, x = d sc (q - 32)
#pragma once
#include <cstdint>
#include <optional>
#include <string_view>

namespace pock {

enum class BlockFormat : uint8_t { kQ8_0, kQ4_0, kQ4_1, kQ4_K, kQ6_K };

struct BlockLayout {
  int64_t values = 0;  // per block
  int64_t bytes = 0;   // per block
};

std::optional<BlockFormat> parse_block_format(std::string_view name);  // "q8_0", ...
const char* block_format_name(BlockFormat format);
BlockLayout block_layout(BlockFormat format);

// Bytes of one row of `cols` values, or -1 when cols is not a positive multiple of the block size.
int64_t block_row_bytes(BlockFormat format, int64_t cols);

// `blocks` consecutive blocks from `src` into blocks * values-per-block floats at `out`.
void decode_blocks(BlockFormat format, const uint8_t* src, int64_t blocks, float* out);

// The integer form of a 32-value block, for int8 dot products (recipe frozen_matmul "int8"):
// value i = d q[i] + m with small integers q (q8_0: -128..127 and m = 0; q4_0: 0..15 and
// m = -8 d; q4_1: 0..15). Defined for q8_0, q4_0 and q4_1 only.
bool has_int8_view(BlockFormat format);
void block_int8_view(BlockFormat format, const uint8_t* src, int8_t q[32], float* d, float* m);

}  // namespace pock
