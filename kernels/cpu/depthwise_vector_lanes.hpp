// Lane moves shared by the depthwise vector planes (depthwise_vector_rows.cpp for 3x3 windows,
// depthwise_vector_rows_5x5.cpp for 5x5): a row's vector shifted by columns with zeros shifted
// in (what lies outside the row), the even and odd columns of two vectors for stride 2, and the
// lanes an overlapping last block of a row has already seen.
#pragma once
#include <cstdint>

#include "kernels/cpu/vec8.hpp"

namespace pock::cpu::depthwise_lanes {

using simd::Vec8;
using Bits = int32_t __attribute__((vector_size(32)));

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"
// {0, .., 0, v0, ..} and {.., v7, 0, .., 0}: the vector kN = 1 or 2 columns to the right / left.
template <int kN>
POCK_SIMD_INLINE Vec8 shift_right(Vec8 v) {
  if constexpr (kN == 1) return __builtin_shufflevector(v, Vec8{}, 8, 0, 1, 2, 3, 4, 5, 6);
  return __builtin_shufflevector(v, Vec8{}, 8, 8, 0, 1, 2, 3, 4, 5);
}
template <int kN>
POCK_SIMD_INLINE Vec8 shift_left(Vec8 v) {
  if constexpr (kN == 1) return __builtin_shufflevector(v, Vec8{}, 1, 2, 3, 4, 5, 6, 7, 8);
  return __builtin_shufflevector(v, Vec8{}, 2, 3, 4, 5, 6, 7, 8, 8);
}

// At stride 2, from the input vectors a = columns [c, c + 8) and b = [c + 8, c + 16), one in-lane
// shuffle (vshufps) picks columns c, c + 2, ... (even lanes) or c + 1, c + 3, ... (odd lanes) in
// the order of the block's outputs {0, 1, 4, 5, 2, 3, 6, 7}: every tap row works in that order, and
// the block's sum is put back in column order once (in_column_order, its own inverse).
POCK_SIMD_INLINE Vec8 even_lanes(Vec8 a, Vec8 b) { return __builtin_shufflevector(a, b, 0, 2, 8, 10, 4, 6, 12, 14); }
POCK_SIMD_INLINE Vec8 odd_lanes(Vec8 a, Vec8 b) { return __builtin_shufflevector(a, b, 1, 3, 9, 11, 5, 7, 13, 15); }
POCK_SIMD_INLINE Vec8 in_column_order(Vec8 v) { return __builtin_shufflevector(v, v, 0, 1, 4, 5, 2, 3, 6, 7); }

// The stride-2 input gradients' dx columns: even and odd columns of 8 outputs each, interleaved
// into the 16 consecutive floats at `to`.
POCK_SIMD_INLINE void store_interleaved(float* to, Vec8 even, Vec8 odd) {
  simd::store8(to, __builtin_shufflevector(even, odd, 0, 8, 1, 9, 2, 10, 3, 11));
  simd::store8(to + 8, __builtin_shufflevector(even, odd, 4, 12, 5, 13, 6, 14, 7, 15));
}

// A row is covered by blocks of 8 columns at 0, 8, ... and a last one at width - 8, which
// overlaps the one before it when the width is not a multiple of 8: its first lanes_seen lanes.
POCK_SIMD_INLINE int32_t lanes_seen(int64_t width) { return static_cast<int32_t>((8 - width % 8) % 8); }
// The lanes a sum must still count in the last block (all ones where lane >= lanes_seen).
POCK_SIMD_INLINE Bits unseen_lanes(int64_t width) {
  const Bits lane = {0, 1, 2, 3, 4, 5, 6, 7};
  return lane >= lanes_seen(width);
}
// v with the lanes outside `keep` zeroed by bits (an infinity there is dropped, not made NaN).
POCK_SIMD_INLINE Vec8 keep_lanes(Vec8 v, Bits keep) { return reinterpret_cast<Vec8>(reinterpret_cast<Bits>(v) & keep); }
#pragma GCC diagnostic pop

}  // namespace pock::cpu::depthwise_lanes
