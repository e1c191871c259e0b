// The transposes run 16x16 tiles held in registers on x86 (AVX-512: masked, so ragged edges need no
// scalar tail; AVX2: four 8x8 blocks, scalar edges) and plain loops elsewhere. The scalar tiles
// were 17 % of a MobileNetV2 training step (issue #6): one output, [8, 96, 64, 64] with a bias,
// took 5.9 ms through them and 0.9 ms through AVX-512 tiles (one core, AVX-512 Xeon).
#include "kernels/cpu/layout.hpp"

#include <algorithm>

#include "kernels/cpu/activation_epilogue.hpp"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define POCK_LAYOUT_X86 1
#endif

namespace pock::cpu {
namespace {

// Square tiles keep both the reads and the writes of a transpose within a few cache lines.
constexpr int64_t kTile = 16;

// dst[c][r] = clamp(src[r][c] + add[c]) for a rows x cols block; `add` may be null. The clamp is
// written as two selects so that NaN passes through, as the activation kernels let it.
void transpose_block(const float* src, int64_t src_stride, float* dst, int64_t dst_stride, int64_t rows, int64_t cols,
                     const float* add, Clamp clamp) {
  for (int64_t c = 0; c < cols; ++c) {
    const float a = add ? add[c] : 0.0f;
    for (int64_t r = 0; r < rows; ++r) {
      float v = src[r * src_stride + c] + a;
      v = v < clamp.lo ? clamp.lo : v;
      v = v > clamp.hi ? clamp.hi : v;
      dst[c * dst_stride + r] = v;
    }
  }
}

using TileFn = void (*)(const float*, int64_t, float*, int64_t, int64_t, int64_t, const float*, Clamp);

#ifdef POCK_LAYOUT_X86

// One tile of up to 16 x 16 in sixteen zmm registers: masked loads of the rows there are, the
// unpack / shuffle / 128-bit-lane network that leaves column i in register i, masked stores.
__attribute__((target("avx512f"))) void transpose_tile_avx512(const float* src, int64_t src_stride, float* dst,
                                                                int64_t dst_stride, int64_t rows, int64_t cols,
                                                                const float* add, Clamp clamp) {
  const __mmask16 col_mask = static_cast<__mmask16>((1u << cols) - 1);
  const __mmask16 row_mask = static_cast<__mmask16>((1u << rows) - 1);
  __m512 r[16], t[16];
  for (int64_t i = 0; i < 16; ++i) {
    r[i] = i < rows ? _mm512_maskz_loadu_ps(col_mask, src + i * src_stride) : _mm512_setzero_ps();
  }
  for (int i = 0; i < 16; i += 2) {
    t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
  }
  // Per 128-bit lane L: r[4q + j] holds column 4L + j of rows 4q .. 4q + 3.
  for (int q = 0; q < 16; q += 4) {
    r[q] = _mm512_shuffle_ps(t[q], t[q + 2], 0x44);
    r[q + 1] = _mm512_shuffle_ps(t[q], t[q + 2], 0xEE);
    r[q + 2] = _mm512_shuffle_ps(t[q + 1], t[q + 3], 0x44);
    r[q + 3] = _mm512_shuffle_ps(t[q + 1], t[q + 3], 0xEE);
  }
  for (int j = 0; j < 4; ++j) {
    t[j] = _mm512_shuffle_f32x4(r[j], r[j + 4], 0x88);
    t[j + 4] = _mm512_shuffle_f32x4(r[j], r[j + 4], 0xDD);
    t[j + 8] = _mm512_shuffle_f32x4(r[j + 8], r[j + 12], 0x88);
    t[j + 12] = _mm512_shuffle_f32x4(r[j + 8], r[j + 12], 0xDD);
  }
  for (int j = 0; j < 8; ++j) {
    r[j] = _mm512_shuffle_f32x4(t[j], t[j + 8], 0x88);
    r[j + 8] = _mm512_shuffle_f32x4(t[j], t[j + 8], 0xDD);
  }
  const __m512 lo = _mm512_set1_ps(clamp.lo), hi = _mm512_set1_ps(clamp.hi);
  for (int64_t c = 0; c < cols; ++c) {
    __m512 v = add ? _mm512_add_ps(r[c], _mm512_set1_ps(add[c])) : r[c];
    // v second: on a NaN operand max/min return the second one, so NaN passes through as above.
    v = _mm512_min_ps(hi, _mm512_max_ps(lo, v));
    _mm512_mask_storeu_ps(dst + c * dst_stride, row_mask, v);
  }
}

// An 8 x 8 block in eight ymm registers (column i ends in register i).
__attribute__((target("avx2"))) inline void transpose_8x8_avx2(const float* src, int64_t src_stride, float* dst,
                                                                int64_t dst_stride, const float* add, Clamp clamp) {
  __m256 r[8], t[8];
  for (int i = 0; i < 8; ++i) r[i] = _mm256_loadu_ps(src + i * src_stride);
  for (int i = 0; i < 8; i += 2) {
    t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
  }
  for (int q = 0; q < 8; q += 4) {
    r[q] = _mm256_shuffle_ps(t[q], t[q + 2], 0x44);
    r[q + 1] = _mm256_shuffle_ps(t[q], t[q + 2], 0xEE);
    r[q + 2] = _mm256_shuffle_ps(t[q + 1], t[q + 3], 0x44);
    r[q + 3] = _mm256_shuffle_ps(t[q + 1], t[q + 3], 0xEE);
  }
  for (int j = 0; j < 4; ++j) {
    t[j] = _mm256_permute2f128_ps(r[j], r[j + 4], 0x20);
    t[j + 4] = _mm256_permute2f128_ps(r[j], r[j + 4], 0x31);
  }
  const __m256 lo = _mm256_set1_ps(clamp.lo), hi = _mm256_set1_ps(clamp.hi);
  for (int c = 0; c < 8; ++c) {
    __m256 v = add ? _mm256_add_ps(t[c], _mm256_set1_ps(add[c])) : t[c];
    v = _mm256_min_ps(hi, _mm256_max_ps(lo, v));
    _mm256_storeu_ps(dst + c * dst_stride, v);
  }
}

// A tile as whole 8 x 8 blocks, and the strips along its right and bottom edges as scalar loops.
__attribute__((target("avx2"))) void transpose_tile_avx2(const float* src, int64_t src_stride, float* dst,
                                                           int64_t dst_stride, int64_t rows, int64_t cols,
                                                           const float* add, Clamp clamp) {
  const int64_t full_rows = rows / 8 * 8, full_cols = cols / 8 * 8;
  for (int64_t r = 0; r < full_rows; r += 8) {
    for (int64_t c = 0; c < full_cols; c += 8) {
      transpose_8x8_avx2(src + r * src_stride + c, src_stride, dst + c * dst_stride + r, dst_stride,
                         add ? add + c : nullptr, clamp);
    }
  }
  if (full_cols < cols) {
    transpose_block(src + full_cols, src_stride, dst + full_cols * dst_stride, dst_stride, rows, cols - full_cols,
                    add ? add + full_cols : nullptr, clamp);
  }
  if (full_rows < rows) {
    transpose_block(src + full_rows * src_stride, src_stride, dst + full_rows, dst_stride, rows - full_rows, full_cols,
                    add, clamp);
  }
}

TileFn pick_tile() {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return transpose_tile_avx512;
  if (__builtin_cpu_supports("avx2")) return transpose_tile_avx2;
  return transpose_block;
}

#else

TileFn pick_tile() { return transpose_block; }

#endif

// Chosen once for the running CPU, as the POCK_SIMD_CLONES ifuncs are (simd.hpp).
const TileFn kTransposeTile = pick_tile();

// Transposes `batch` row-major [rows][cols] matrices into [cols][rows], adding add[col] when given
// and clamping. Work is split over (matrix, row tile) pairs.
void batched_transpose(const float* src, float* dst, int64_t batch, int64_t rows, int64_t cols, const float* add,
                       Clamp clamp, TileFn tile_fn, pthreadpool_t pool) {
  const int64_t row_tiles = (rows + kTile - 1) / kTile;
  const size_t tasks = static_cast<size_t>(batch * row_tiles);
  parallel_for(pool, tasks, balanced_tile(pool, tasks, 4), [&](size_t begin, size_t end) {
    for (size_t t = begin; t < end; ++t) {
      const int64_t b = static_cast<int64_t>(t) / row_tiles;
      const int64_t r0 = static_cast<int64_t>(t) % row_tiles * kTile;
      const int64_t r_count = std::min(kTile, rows - r0);
      const float* s = src + b * rows * cols;
      float* d = dst + b * rows * cols;
      for (int64_t c0 = 0; c0 < cols; c0 += kTile) {
        tile_fn(s + r0 * cols + c0, cols, d + c0 * rows + r0, rows, r_count, std::min(kTile, cols - c0),
                add ? add + c0 : nullptr, clamp);
      }
    }
  });
}

}  // namespace

void nchw_to_nhwc(const float* x, float* y, int64_t batch, int64_t channels, int64_t plane, pthreadpool_t pool) {
  batched_transpose(x, y, batch, channels, plane, nullptr, clamp_of(Activation::kNone), kTransposeTile, pool);
}

void nhwc_to_nchw(const float* x, const float* bias, float* y, int64_t batch, int64_t channels, int64_t plane,
                  pthreadpool_t pool, Activation activation) {
  batched_transpose(x, y, batch, plane, channels, bias, clamp_of(activation), kTransposeTile, pool);
}

namespace layout_testing {

namespace {
TileFn tile_fn(Tiles tiles) {
#ifdef POCK_LAYOUT_X86
  if (tiles == Tiles::kAvx512) return __builtin_cpu_supports("avx512f") ? transpose_tile_avx512 : nullptr;
  if (tiles == Tiles::kAvx2) return __builtin_cpu_supports("avx2") ? transpose_tile_avx2 : nullptr;
#else
  if (tiles != Tiles::kScalar) return nullptr;
#endif
  return transpose_block;
}
}  // namespace

bool available(Tiles tiles) { return tile_fn(tiles) != nullptr; }

void nchw_to_nhwc_with(Tiles tiles, const float* x, float* y, int64_t batch, int64_t channels, int64_t plane) {
  batched_transpose(x, y, batch, channels, plane, nullptr, clamp_of(Activation::kNone), tile_fn(tiles), nullptr);
}

void nhwc_to_nchw_with(Tiles tiles, const float* x, const float* bias, float* y, int64_t batch, int64_t channels,
                       int64_t plane, Activation activation) {
  batched_transpose(x, y, batch, plane, channels, bias, clamp_of(activation), tile_fn(tiles), nullptr);
}

}  // namespace layout_testing

}  // namespace pock::cpu
