// IEEE half (f16) and bfloat16 <-> f32, one value at a time, for importers and exporters that
// convert stored tensors (kernels have vectorized paths of their own). Round to nearest even;
// NaN stays NaN, overflow becomes infinity.
#pragma once
#include <cstdint>

namespace pock {

float half_to_float(uint16_t h);
uint16_t float_to_half(float f);
float bf16_to_float(uint16_t h);
uint16_t float_to_bf16(float f);

}  // namespace pock
