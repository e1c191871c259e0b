// Logic of compute "int8" on the CUDA backend (block_quant.cu), the arithmetic that
// kernels/ref/block_quant.cpp defines for every backend, every 32 values quantized as
// kernels/int8_rows.h does (the same integers and scale, bit for bit):
//   LinearQ: x's blocks a[r, b] with scales s; each weight block seen as d q + m (block_int8_view);
//     y[r, j] = bias[j] + sum_b s[r, b] (d[j, b] dot(a[r, b], q[j, b]) + m[j, b] sum(a[r, b])).
//   LinearQInputGrad: dy's blocks of 32 j's, and each weight column over the same 32 rows
//     (qt[c, p], st[c, p]); dx[r, p] = sum_c s[r, c] st[c, p] dot(a[r, c], qt[c, p]).
// Summed in f32 here (ref sums in double). Phases are functions of the thread index, so the
// host tests run a block's threads one after another, as for the f32 tiles.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>

#include "kernels/cuda/block_quant_logic.hpp"
#include "kernels/cuda/hd.hpp"

namespace pock::cuda {

POCK_HD float mul_rn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}

// The 32 values of a block to quantize: consecutive floats (x's rows, dy's rows) or one column of
// 32 decoded weight rows (LinearQInputGrad int8).
struct ArrayValues {
  const float* v;
  POCK_HD float operator()(int i) const { return v[i]; }
};

struct ColumnValues {
  QuantRows w;
  int64_t first_row, col;
  POCK_HD float operator()(int i) const { return w.at(first_row + i, col); }
};

// Quantizes the 32 values of one block with a team (one value per lane of a warp, or all 32 by
// one SoloTeam): q and, from lane 0, the scale (amax / 127; 0 for zeros, NaN when a value is
// not finite) and the integer sum of q that the weight's offset m multiplies.
template <typename Team, typename Values>
POCK_HD void quantize_block(const Team& team, const Values& values, int8_t* q, float* scale, int32_t* sum) {
  float amax = 0.0f, bad = 0.0f;
  for (int i = team.lane; i < 32; i += team.lanes) {
    const float v = values(i);
    const float a = v < 0.0f ? -v : v;
    if (!(a <= 3.402823466e38f)) {
      bad = 1.0f;
    } else if (a > amax) {
      amax = a;
    }
  }
  amax = team.max(amax);
  const bool finite = team.max(bad) == 0.0f;
  const float inv = finite && amax != 0.0f ? 127.0f / amax : 0.0f;
  float total = 0.0f;
  for (int i = team.lane; i < 32; i += team.lanes) {
    int32_t out = 0;
    if (inv != 0.0f) {
      float t = mul_rn(values(i), inv);
      t = t > 127.0f ? 127.0f : (t < -127.0f ? -127.0f : t);
      out = t >= 0.0f ? static_cast<int32_t>(t + 0.5f) : -static_cast<int32_t>(0.5f - t);
    }
    q[i] = static_cast<int8_t>(out);
    total += static_cast<float>(out);
  }
  total = team.sum(total);  // at most 32 * 127: exact in f32
  if (team.lane == 0) {
    *scale = !finite ? NAN : (amax == 0.0f ? 0.0f : amax / 127.0f);
    if (sum) *sum = static_cast<int32_t>(total);
  }
}

// x [rows, k] quantized per block: q [rows, k], scales and sums [rows, k / 32]. f(team, block).
struct QuantizeBlocks {
  const float* x;
  int8_t* q;
  float* scales;
  int32_t* sums;
  template <typename Team>
  POCK_HD void operator()(const Team& team, int64_t block) const {
    quantize_block(team, ArrayValues{x + 32 * block}, q + 32 * block, scales + block, sums + block);
  }
};

// LinearQInputGrad int8: column p of weight rows 32 c .. 32 c + 31, decoded and quantized into
// qt [chunks, cols, 32] and st [chunks, cols]. f(team, c * cols + p).
struct QuantizeColumns {
  QuantRows w;
  int64_t cols;
  int8_t* q;
  float* scales;
  template <typename Team>
  POCK_HD void operator()(const Team& team, int64_t block) const {
    const int64_t chunk = block / cols, col = block % cols;
    quantize_block(team, ColumnValues{w, 32 * chunk, col}, q + 32 * block, scales + block, nullptr);
  }
};

// The integer view of value i of a q8_0, q4_0 or q4_1 block (value = d q + m), and its d and m.
POCK_HD int32_t block_int8_value(BlockFormat f, const uint8_t* block, int i) {
  if (f == BlockFormat::kQ8_0) return static_cast<int8_t>(block[2 + i]);
  const uint8_t* nibbles = block + (f == BlockFormat::kQ4_0 ? 2 : 4);
  return i < 16 ? nibbles[i] & 0x0f : nibbles[i - 16] >> 4;
}

POCK_HD void block_int8_scale(BlockFormat f, const uint8_t* block, float* d, float* m) {
  *d = load_half_at(block);
  *m = f == BlockFormat::kQ4_1 ? load_half_at(block + 2) : (f == BlockFormat::kQ4_0 ? -8.0f * *d : 0.0f);
}

// Four int8 in one word: a . b + c.
POCK_HD int32_t dot4(int32_t a, int32_t b, int32_t c) {
#if defined(__CUDA_ARCH__)
  return __dp4a(a, b, c);
#else
  for (int i = 0; i < 4; ++i) c += static_cast<int8_t>(a >> (8 * i)) * static_cast<int8_t>(b >> (8 * i));
  return c;
#endif
}

POCK_HD int32_t pack4(int32_t v0, int32_t v1, int32_t v2, int32_t v3) {
  return static_cast<int32_t>((static_cast<uint32_t>(v0) & 0xffu) | ((static_cast<uint32_t>(v1) & 0xffu) << 8) |
                              ((static_cast<uint32_t>(v2) & 0xffu) << 16) | ((static_cast<uint32_t>(v3) & 0xffu) << 24));
}

POCK_HD int32_t load_word(const int8_t* p) {
#if defined(__CUDA_ARCH__)
  return *reinterpret_cast<const int32_t*>(p);  // 4-aligned: rows are multiples of 32 values
#else
  int32_t w;
  memcpy(&w, p, sizeof w);
  return w;
#endif
}

// A 64 x 64 tile of y, one 32-value block of k per step; words padded to 9 per row so that the
// 16 column groups of a warp fall into different banks.
struct Int8Tile {
  int32_t a[kTileM][9];
  int32_t q[kTileN][9];
  float scale[kTileM], d[kTileN], m[kTileN];
  int32_t sum[kTileM];
};

// B's side of a step: kTileN columns of one 32-deep block, 8 values per thread, as integers with
// their d and m (value = d q + m).
// LinearQ: B (k, n) = w[n][k], the weight's own blocks (block_int8_view).
struct WeightInt8Blocks {
  QuantRows w;
  int64_t n;
  POCK_HD void load(Int8Tile& t, int64_t n0, int64_t b, int thread) const {
    const int col = thread / 4, part = thread % 4;
    const bool inside = n0 + col < n;
    const uint8_t* block = w.data + (n0 + col) * w.row_bytes + b * block_bytes_of(w.format);
    for (int word = 2 * part; word < 2 * part + 2; ++word) {
      int32_t v[4] = {0, 0, 0, 0};
      for (int i = 0; inside && i < 4; ++i) v[i] = block_int8_value(w.format, block, 4 * word + i);
      t.q[col][word] = pack4(v[0], v[1], v[2], v[3]);
    }
    if (part == 0) {
      float d = 0.0f, off = 0.0f;
      if (inside) block_int8_scale(w.format, block, &d, &off);
      t.d[col] = d;
      t.m[col] = off;
    }
  }
};

// LinearQInputGrad: B (k, n) = w[k][n], its columns quantized per 32 rows (QuantizeColumns).
struct QuantizedColumns {
  const int8_t* q;       // [chunks, n, 32]
  const float* scales;   // [chunks, n]
  int64_t n;
  POCK_HD void load(Int8Tile& t, int64_t n0, int64_t chunk, int thread) const {
    const int col = thread / 4, part = thread % 4;
    const bool inside = n0 + col < n;
    const int8_t* column = q + (chunk * n + n0 + col) * 32;
    for (int word = 2 * part; word < 2 * part + 2; ++word) t.q[col][word] = inside ? load_word(column + 4 * word) : 0;
    if (part == 0) {
      t.d[col] = inside ? scales[chunk * n + n0 + col] : 0.0f;
      t.m[col] = 0.0f;
    }
  }
};

template <typename BSource>
struct Int8Gemm {
  const int8_t* a;       // [m, k] quantized x (dy)
  const float* scales;   // [m, k / 32]
  const int32_t* sums;   // [m, k / 32], or null where B has no offsets
  BSource source;
  const float* bias;     // [n] or null
  float* y;              // [m, n]
  int64_t m, n, k;

  POCK_HD void load(Int8Tile& t, int64_t m0, int64_t n0, int64_t k0, int thread) const {
    const int64_t blocks = k / 32, b = k0 / 32;
    for (int i = thread; i < kTileM * 8; i += kTileThreads) {
      const int row = i / 8, word = i % 8;
      t.a[row][word] = m0 + row < m ? load_word(a + (m0 + row) * k + k0 + 4 * word) : 0;
    }
    if (thread < kTileM) {
      const bool inside = m0 + thread < m;
      t.scale[thread] = inside ? scales[(m0 + thread) * blocks + b] : 0.0f;
      t.sum[thread] = inside && sums ? sums[(m0 + thread) * blocks + b] : 0;
    }
    source.load(t, n0, b, thread);
  }

  POCK_HD void accumulate(const Int8Tile& t, int thread, float acc[4][4]) const {
    const int row = (thread / 16) * 4, col = (thread % 16) * 4;
    for (int i = 0; i < 4; ++i) {
      for (int j = 0; j < 4; ++j) {
        int32_t dot = 0;
        for (int word = 0; word < 8; ++word) dot = dot4(t.a[row + i][word], t.q[col + j][word], dot);
        acc[i][j] += t.scale[row + i] * (t.d[col + j] * static_cast<float>(dot) +
                                         t.m[col + j] * static_cast<float>(t.sum[row + i]));
      }
    }
  }

  POCK_HD void store(int64_t m0, int64_t n0, int thread, const float acc[4][4]) const {
    const int row = (thread / 16) * 4, col = (thread % 16) * 4;
    for (int i = 0; i < 4; ++i) {
      for (int j = 0; j < 4; ++j) {
        const int64_t r = m0 + row + i, c = n0 + col + j;
        if (r < m && c < n) y[r * n + c] = (bias ? bias[c] : 0.0f) + acc[i][j];
      }
    }
  }
};

}  // namespace pock::cuda
