// Block-quantized weight rows decoded to f32 with vector code (simd.hpp's clones), for the cpu
// backend's block_quant kernels: the same values as the shared decoder (ir/block_format.hpp),
// which still serves the K-quants.
#pragma once
#include <cstdint>

#include "ir/block_format.hpp"

namespace pock::cpu {

// `blocks` consecutive blocks of `format` from `src` into `out`.
void decode_blocks_fast(BlockFormat format, const uint8_t* src, int64_t blocks, float* out);

}  // namespace pock::cpu
