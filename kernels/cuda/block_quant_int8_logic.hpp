// Logic of LinearQ's compute "int8" on the CUDA backend (block_quant.cu), the arithmetic that
// kernels/ref/block_quant.cpp defines for every backend: each 32-value block of x quantized as
// kernels/int8_rows.h does (the same integers and scale, bit for bit), each weight block seen as
// d q + m (block_int8_view), and
//   y[r, j] = bias[j] + sum_b s[r, b] (d[j, b] dot(a[r, b], q[j, b]) + m[j, b] sum(a[r, b])),
// summed in f32 here (ref sums in double). Phases are functions of the thread index, so the
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

// Quantizes the 32 values of one block with a team (one value per lane of a warp, or all 32 by
// one SoloTeam): q and, from lane 0, the scale (amax / 127; 0 for zeros, NaN when a value is
// not finite) and the integer sum of q that the weight's offset m multiplies.
template <typename Team>
POCK_HD void quantize_block(const Team& team, const float* v, int8_t* q, float* scale, int32_t* sum) {
  float amax = 0.0f, bad = 0.0f;
  for (int i = team.lane; i < 32; i += team.lanes) {
    const float a = v[i] < 0.0f ? -v[i] : v[i];
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
      float t = mul_rn(v[i], inv);
      t = t > 127.0f ? 127.0f : (t < -127.0f ? -127.0f : t);
      out = t >= 0.0f ? static_cast<int32_t>(t + 0.5f) : -static_cast<int32_t>(0.5f - t);
    }
    q[i] = static_cast<int8_t>(out);
    total += static_cast<float>(out);
  }
  total = team.sum(total);  // at most 32 * 127: exact in f32
  if (team.lane == 0) {
    *scale = !finite ? NAN : (amax == 0.0f ? 0.0f : amax / 127.0f);
    *sum = static_cast<int32_t>(total);
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
    quantize_block(team, x + 32 * block, q + 32 * block, scales + block, sums + block);
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

struct Int8Gemm {
  const int8_t* a;       // [m, k] quantized x
  const float* scales;   // [m, k / 32]
  const int32_t* sums;   // [m, k / 32]
  QuantRows w;           // [n, k] blocks
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
      t.sum[thread] = inside ? sums[(m0 + thread) * blocks + b] : 0;
    }
    const int col = thread / 4, part = thread % 4;  // 8 values of one weight block each
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
