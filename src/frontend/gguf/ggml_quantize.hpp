// f32 values into ggml tensor types, for writing GGUF files that llama.cpp reads: F32, F16, BF16
// and the 32-value block types Q8_0, Q4_0, Q4_1 (layouts in ggml_types.hpp). Each block's scale
// is chosen from the block alone, as llama.cpp's reference quantizers choose it: Q8_0 maps the
// largest magnitude to +-127; Q4_0 maps the value of largest magnitude to -8; Q4_1 spans the
// block's minimum to maximum in 15 steps.
#pragma once
#include <cstdint>
#include <vector>

#include "pock/status.hpp"

namespace pock::gguf {

// True for the types from_f32 writes.
bool can_quantize(uint32_t type);

// `elements` values (a multiple of the type's block size) as `type`: the bytes a GGUF tensor of
// that type holds.
Result<std::vector<uint8_t>> from_f32(uint32_t type, const float* values, uint64_t elements);

}  // namespace pock::gguf
