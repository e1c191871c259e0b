#include "kernels/neon/bf16_panel.hpp"

#include <arm_neon.h>

#include <algorithm>
#include <cstring>

#include "kernels/bf16_round.h"
#include "kernels/neon/neon_util.hpp"

// BFMMLA inside the one function compiled for it: GCC's arm_neon.h declares the bf16 intrinsics
// for any target (under its own target pragma), as clang's does from 17 on; older clang only when
// the whole file targets bf16, which would let the compiler use ARMv8.6 instructions in inline
// code that the linker may pick for the whole library.
#if defined(__ARM_FEATURE_BF16_VECTOR_ARITHMETIC) || (defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 10) || \
    (defined(__clang__) && __clang_major__ >= 17)
#define POCK_NEON_BFMMLA 1
#if defined(__clang__)
#define POCK_BF16_TARGET __attribute__((target("bf16")))
#else
#define POCK_BF16_TARGET __attribute__((target("arch=armv8.6-a+bf16")))
#endif
#endif

namespace pock::neon {
namespace {

int64_t round_up(int64_t v, int64_t multiple) { return (v + multiple - 1) / multiple * multiple; }
int64_t depth_blocks(int64_t depth) { return (depth + 3) / 4; }

// pock_f32_to_bf16 (kernels/bf16_round.h) on four lanes, in integers: nearest even, NaN kept quiet.
uint16x4_t round_to_bf16(float32x4_t v) {
  const uint32x4_t bits = vreinterpretq_u32_f32(v);
  const uint32x4_t odd = vandq_u32(vshrq_n_u32(bits, 16), vdupq_n_u32(1));
  const uint32x4_t rounded = vaddq_u32(bits, vaddq_u32(odd, vdupq_n_u32(0x7fff)));
  const uint32x4_t nan = vcgtq_u32(vandq_u32(bits, vdupq_n_u32(0x7fffffff)), vdupq_n_u32(0x7f800000));
  return vshrn_n_u32(vbslq_u32(nan, vorrq_u32(bits, vdupq_n_u32(0x00400000)), rounded), 16);
}

// Row r of a depth-contiguous source into `out` (its half of a pair: four values a block, blocks
// eight apart).
void pack_contiguous_row(const Bf16Source& s, int64_t r, int64_t depth, uint16_t* out) {
  const int64_t full = depth / 4, rest = depth % 4;
  if (s.bf16) {
    const uint16_t* row = static_cast<const uint16_t*>(s.data) + r * s.ld;
    for (int64_t q = 0; q < full; ++q) vst1_u16(out + q * 8, vld1_u16(row + q * 4));
    if (rest) {
      uint16_t lanes[4] = {0, 0, 0, 0};
      std::memcpy(lanes, row + full * 4, static_cast<size_t>(rest) * sizeof(uint16_t));
      vst1_u16(out + full * 8, vld1_u16(lanes));
    }
    return;
  }
  const float* row = static_cast<const float*>(s.data) + r * s.ld;
  for (int64_t q = 0; q < full; ++q) vst1_u16(out + q * 8, round_to_bf16(vld1q_f32(row + q * 4)));
  if (rest) vst1_u16(out + full * 8, round_to_bf16(load_partial(row + full * 4, rest)));
}

uint16_t bf16_at(const Bf16Source& s, int64_t i) {
  return s.bf16 ? static_cast<const uint16_t*>(s.data)[i] : pock_f32_to_bf16(static_cast<const float*>(s.data)[i]);
}

// Rows r0 and r0 + 1 (those below `rows`) of a source stored depth-major: the pair's two values
// are next to each other at each depth.
void pack_strided_pair(const Bf16Source& s, int64_t r0, int64_t rows, int64_t depth, uint16_t* pair) {
  const int64_t live = std::min<int64_t>(2, rows - r0);
  for (int64_t d = 0; d < depth; ++d) {
    for (int64_t h = 0; h < live; ++h) pair[(d / 4) * 8 + h * 4 + d % 4] = bf16_at(s, d * s.ld + r0 + h);
  }
}

#ifdef POCK_NEON_BFMMLA
POCK_BF16_TARGET bfloat16x8_t load_bf16x8(const uint16_t* p) { return vreinterpretq_bf16_u16(vld1q_u16(p)); }

// out[4][8] (leading dimension ld) = rows of a (two pairs, at a and a + pair) times rows of b
// (four pairs) over `blocks` blocks of four depth values.
POCK_BF16_TARGET void tile_4x8(const uint16_t* a, const uint16_t* b, int64_t blocks, float* out, int64_t ld) {
  const int64_t pair = blocks * 8;
  float32x4_t c00 = vdupq_n_f32(0.0f), c01 = c00, c02 = c00, c03 = c00, c10 = c00, c11 = c00, c12 = c00, c13 = c00;
  for (int64_t q = 0; q < pair; q += 8) {
    const bfloat16x8_t a0 = load_bf16x8(a + q), a1 = load_bf16x8(a + pair + q);
    const bfloat16x8_t b0 = load_bf16x8(b + q), b1 = load_bf16x8(b + pair + q);
    const bfloat16x8_t b2 = load_bf16x8(b + 2 * pair + q), b3 = load_bf16x8(b + 3 * pair + q);
    c00 = vbfmmlaq_f32(c00, a0, b0);
    c01 = vbfmmlaq_f32(c01, a0, b1);
    c02 = vbfmmlaq_f32(c02, a0, b2);
    c03 = vbfmmlaq_f32(c03, a0, b3);
    c10 = vbfmmlaq_f32(c10, a1, b0);
    c11 = vbfmmlaq_f32(c11, a1, b1);
    c12 = vbfmmlaq_f32(c12, a1, b2);
    c13 = vbfmmlaq_f32(c13, a1, b3);
  }
  // An accumulator of a's pair i and b's pair j holds [a0·b0, a0·b1, a1·b0, a1·b1]: its low half
  // is part of row 2i, its high half of row 2i + 1.
  const float32x4_t sums[2][4] = {{c00, c01, c02, c03}, {c10, c11, c12, c13}};
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 4; ++j) {
      vst1_f32(out + (2 * i) * ld + 2 * j, vget_low_f32(sums[i][j]));
      vst1_f32(out + (2 * i + 1) * ld + 2 * j, vget_high_f32(sums[i][j]));
    }
  }
}
#endif

void apply_epilogue(const Bf16Epilogue& e, int64_t rows, int64_t cols, int64_t column0, float* y, int64_t ld) {
  if (!e.bias && e.activation == Activation::kNone) return;
  for (int64_t r = 0; r < rows; ++r) {
    float* row = y + r * ld;
    for (int64_t j = 0; j < cols; ++j) {
      row[j] = apply_activation(e.activation, e.bias ? row[j] + e.bias[column0 + j] : row[j]);
    }
  }
}

}  // namespace

size_t bf16_panel_bytes(int64_t rows, int64_t depth, int64_t row_multiple) {
  return static_cast<size_t>(round_up(rows, row_multiple) * depth_blocks(depth) * 4) * sizeof(uint16_t);
}

void pack_bf16_panel(const Bf16Source& src, int64_t rows, int64_t depth, int64_t row_multiple, uint16_t* panel,
                     pthreadpool_t pool) {
  const int64_t blocks = depth_blocks(depth);
  const size_t pairs = static_cast<size_t>(round_up(rows, row_multiple) / 2);
  cpu::parallel_for(pool, pairs, cpu::balanced_tile(pool, pairs, 8), [&](size_t begin, size_t end) {
    for (size_t p = begin; p < end; ++p) {
      uint16_t* pair = panel + static_cast<int64_t>(p) * blocks * 8;
      const int64_t r0 = static_cast<int64_t>(p) * 2;
      if (!src.depth_contiguous || r0 + 1 >= rows) std::fill(pair, pair + blocks * 8, uint16_t{0});
      if (!src.depth_contiguous) {
        if (r0 < rows) pack_strided_pair(src, r0, rows, depth, pair);
        continue;
      }
      for (int64_t h = 0; h < 2 && r0 + h < rows; ++h) pack_contiguous_row(src, r0 + h, depth, pair + h * 4);
    }
  });
}

void multiply_bf16_panels(const uint16_t* a, const uint16_t* b, int64_t m, int64_t n, int64_t depth,
                          const Bf16Epilogue& epilogue, float* y, pthreadpool_t pool) {
#ifdef POCK_NEON_BFMMLA
  const int64_t blocks = depth_blocks(depth);
  const int64_t row_tiles = (m + kTileRows - 1) / kTileRows, col_tiles = (n + kTileCols - 1) / kTileCols;
  const size_t tiles = static_cast<size_t>(row_tiles * col_tiles);
  // Consecutive tiles share b's rows (one column of tiles), which stay in cache while a's pass.
  cpu::parallel_for(pool, tiles, cpu::balanced_tile(pool, tiles, 4), [&](size_t begin, size_t end) {
    for (size_t t = begin; t < end; ++t) {
      const int64_t i = static_cast<int64_t>(t) % row_tiles * kTileRows, j = static_cast<int64_t>(t) / row_tiles * kTileCols;
      const int64_t rows = std::min(kTileRows, m - i), cols = std::min(kTileCols, n - j);
      const uint16_t* a_rows = a + i * blocks * 4;
      const uint16_t* b_rows = b + j * blocks * 4;
      float* out = y + i * n + j;
      if (rows == kTileRows && cols == kTileCols) {
        tile_4x8(a_rows, b_rows, blocks, out, n);
      } else {
        float part[kTileRows * kTileCols];
        tile_4x8(a_rows, b_rows, blocks, part, kTileCols);
        for (int64_t r = 0; r < rows; ++r) std::copy(part + r * kTileCols, part + r * kTileCols + cols, out + r * n);
      }
      apply_epilogue(epilogue, rows, cols, j, out, n);
    }
  });
#else
  (void)a, (void)b, (void)m, (void)n, (void)depth, (void)epilogue, (void)y, (void)pool;
#endif
}

bool bf16_panels_compiled() {
#ifdef POCK_NEON_BFMMLA
  return true;
#else
  return false;
#endif
}

}  // namespace pock::neon
