// Logic of the CUDA block_quant family (block_quant.cu): GGUF blocks (q8_0, q4_0, q4_1, q4_k,
// q6_k; ir/block_format.hpp) decoded one value at a time, and LinearQ / LinearQInputGrad as a
// tiled matrix product whose weight tiles are decoded into shared memory as they are needed, so
// the f32 weight never exists whole. Each phase of a tile (load, accumulate, store) is a
// function of the thread index, so the host tests (tests/cuda_logic) run a block's threads one
// after another, phase by phase, and compare with kernels/ref.
#pragma once
#include <cstdint>
#include <cstring>

#include "ir/block_format.hpp"
#include "kernels/cuda/error_site.hpp"
#include "kernels/cuda/hd.hpp"

namespace pock::cuda {

// IEEE half to float, exactly (subnormals, infinities and NaN included).
POCK_HD float half_bits_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exponent = (h >> 10) & 0x1fu, mantissa = h & 0x3ffu, bits;
  if (exponent == 0x1f) {
    bits = sign | 0x7f800000u | (mantissa << 13);
  } else if (exponent != 0) {
    bits = sign | ((exponent + 112) << 23) | (mantissa << 13);
  } else if (mantissa == 0) {
    bits = sign;
  } else {  // subnormal: normalize
    exponent = 113;
    while ((mantissa & 0x400u) == 0) {
      mantissa <<= 1;
      --exponent;
    }
    bits = sign | (exponent << 23) | ((mantissa & 0x3ffu) << 13);
  }
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

POCK_HD float load_half_at(const uint8_t* p) { return half_bits_to_float(static_cast<uint16_t>(p[0] | (p[1] << 8))); }

// d * q + m and d * q - m rounded after each operation, as ref's decoder computes them: no fused
// multiply-add on the device.
POCK_HD float scale_shift(float d, float q, float m) {
#if defined(__CUDA_ARCH__)
  return __fadd_rn(__fmul_rn(d, q), m);
#else
  return d * q + m;
#endif
}

POCK_HD float scale_less(float d, float q, float m) {
#if defined(__CUDA_ARCH__)
  return __fsub_rn(__fmul_rn(d, q), m);
#else
  return d * q - m;
#endif
}

// Value i (0..31) of one 32-value block: q8_0, q4_0 or q4_1.
POCK_HD float small_block_value(BlockFormat f, const uint8_t* block, int i) {
  const float d = load_half_at(block);
  if (f == BlockFormat::kQ8_0) return d * static_cast<float>(static_cast<int8_t>(block[2 + i]));
  const uint8_t* nibbles = block + (f == BlockFormat::kQ4_0 ? 2 : 4);
  const int q = i < 16 ? nibbles[i] & 0x0f : nibbles[i - 16] >> 4;
  if (f == BlockFormat::kQ4_0) return d * static_cast<float>(q - 8);
  return scale_shift(d, static_cast<float>(q), load_half_at(block + 2));
}

// Value v (0..255) of a q4_k block: eight groups of 32 with 6-bit scales and minimums; each 64
// values share 32 bytes of nibbles, low nibbles first.
POCK_HD float q4_k_value(const uint8_t* block, int v) {
  const int chunk = v / 64, within = v % 64, group = 2 * chunk + within / 32, l = within % 32;
  const uint8_t* s = block + 4;
  int scale, min;
  if (group < 4) {
    scale = s[group] & 63;
    min = s[group + 4] & 63;
  } else {
    scale = (s[group + 4] & 0x0f) | ((s[group - 4] >> 6) << 4);
    min = (s[group + 4] >> 4) | ((s[group] >> 6) << 4);
  }
  const uint8_t byte = block[16 + 32 * chunk + l];
  const int q = within < 32 ? byte & 0x0f : byte >> 4;
  const float d = load_half_at(block) * static_cast<float>(scale);
  const float m = load_half_at(block + 2) * static_cast<float>(min);
  return scale_less(d, static_cast<float>(q), m);
}

// Value v (0..255) of a q6_k block: per 128 values, four interleaved runs of 32 built from low
// nibbles (64 bytes) and high 2-bit pairs (32 bytes), sixteen int8 scales of 16 values.
POCK_HD float q6_k_value(const uint8_t* block, int v) {
  const int half = v / 128, run = (v % 128) / 32, l = v % 32;
  const uint8_t* ql = block + 64 * half;
  const uint8_t qh = block[128 + 32 * half + l];
  const int8_t scale = static_cast<int8_t>(block[192 + 8 * half + l / 16 + 2 * run]);
  const uint8_t low = run % 2 == 0 ? ql[l] : ql[l + 32];
  const int q = ((run < 2 ? low & 0x0f : low >> 4) | (((qh >> (2 * run)) & 3) << 4)) - 32;
  return load_half_at(block + 208) * static_cast<float>(scale) * static_cast<float>(q);
}

// Bytes and values of one block of `f` (ir/block_format.cpp's layouts, checked by the tests).
POCK_HD int64_t block_bytes_of(BlockFormat f) {
  switch (f) {
    case BlockFormat::kQ8_0: return 34;
    case BlockFormat::kQ4_0: return 18;
    case BlockFormat::kQ4_1: return 20;
    case BlockFormat::kQ4_K: return 144;
    case BlockFormat::kQ6_K: return 210;
  }
  return 0;
}

POCK_HD int block_values_of(BlockFormat f) { return f == BlockFormat::kQ4_K || f == BlockFormat::kQ6_K ? 256 : 32; }

// Value `col` of a block-quantized row.
POCK_HD float quant_value(BlockFormat f, const uint8_t* row, int64_t col) {
  const int per_block = block_values_of(f);
  const uint8_t* block = row + (col / per_block) * block_bytes_of(f);
  const int v = static_cast<int>(col % per_block);
  if (f == BlockFormat::kQ4_K) return q4_k_value(block, v);
  if (f == BlockFormat::kQ6_K) return q6_k_value(block, v);
  return small_block_value(f, block, v);
}

// Block-quantized rows [rows, cols] (cols a multiple of the block size).
struct QuantRows {
  const uint8_t* data;
  int64_t rows, row_bytes;
  BlockFormat format;
  POCK_HD float at(int64_t row, int64_t col) const { return quant_value(format, data + row * row_bytes, col); }
};

// GatherQ: output element i of [count, cols] is row indices[i / cols], decoded; an index out of
// range is reported to `error` (ref refuses it; run does not wait for device indices) and gives
// zeros.
template <typename Index>
struct GatherQElement {
  QuantRows table;
  int64_t cols;
  const Index* indices;
  float* out;
  ErrorSite error;
  POCK_HD void operator()(int64_t i) const {
    int64_t row = static_cast<int64_t>(indices[i / cols]);
    if (row < 0) row += table.rows;
    const bool fits = row >= 0 && row < table.rows;
    if (!fits) error.report();
    out[i] = fits ? table.at(row, i % cols) : 0.0f;
  }
};

// ---- C [m, n] = A [m, k] B (+ bias [n]), B read from block-quantized rows ------------------------
// A block of kTileThreads threads computes a kTileM x kTileN tile of C, kTileK steps of k at a
// time through shared memory; each thread holds a 4 x 4 patch. The rows are padded by one so that
// the transposing stores fall into distinct banks.
constexpr int kTileM = 64, kTileN = 64, kTileK = 32, kTileThreads = 256;

struct QuantTile {
  float a[kTileK][kTileM + 1];
  float b[kTileK][kTileN + 1];
};

// B (k, n) = w[n][k]: LinearQ (y = x w^T). A k step is 32 values of each of kTileN rows.
struct WeightRowsAsColumns {
  QuantRows w;
  POCK_HD void load(QuantTile& t, int64_t k0, int64_t n0, int thread) const {
    const int nn = thread / 4, first = (thread % 4) * 8;
    const bool inside = n0 + nn < w.rows;
    for (int v = first; v < first + 8; ++v) t.b[v][nn] = inside ? w.at(n0 + nn, k0 + v) : 0.0f;
  }
};

// B (k, n) = w[k][n]: LinearQInputGrad (dx = dy w). A k step is kTileK rows, 64 values each.
struct WeightRows {
  QuantRows w;
  int64_t cols;
  POCK_HD void load(QuantTile& t, int64_t k0, int64_t n0, int thread) const {
    const int pair = thread / 4, kk = pair / 2, half = pair % 2, first = (thread % 4) * 8;
    const int64_t row = k0 + kk, col = n0 + half * 32;
    const bool inside = row < w.rows && col < cols;
    for (int v = first; v < first + 8; ++v) t.b[kk][half * 32 + v] = inside ? w.at(row, col + v) : 0.0f;
  }
};

template <typename BSource>
struct QuantGemm {
  const float* a;  // [m, k], row-major
  BSource b;
  const float* bias;  // [n] or null
  float* c;           // [m, n]
  int64_t m, n, k;

  // This thread's share of the A and B tiles at (m0, n0), step k0.
  POCK_HD void load(QuantTile& t, int64_t m0, int64_t n0, int64_t k0, int thread) const {
    for (int i = thread; i < kTileM * kTileK; i += kTileThreads) {
      const int mm = i / kTileK, kk = i % kTileK;  // neighbouring threads read neighbouring k
      const bool inside = m0 + mm < m && k0 + kk < k;
      t.a[kk][mm] = inside ? a[(m0 + mm) * k + k0 + kk] : 0.0f;
    }
    b.load(t, k0, n0, thread);
  }

  POCK_HD void accumulate(const QuantTile& t, int thread, float acc[4][4]) const {
    const int row = (thread / 16) * 4, col = (thread % 16) * 4;
    for (int kk = 0; kk < kTileK; ++kk) {
      float av[4], bv[4];
      for (int i = 0; i < 4; ++i) av[i] = t.a[kk][row + i];
      for (int j = 0; j < 4; ++j) bv[j] = t.b[kk][col + j];
      for (int i = 0; i < 4; ++i) {
        for (int j = 0; j < 4; ++j) acc[i][j] += av[i] * bv[j];
      }
    }
  }

  POCK_HD void store(int64_t m0, int64_t n0, int thread, const float acc[4][4]) const {
    const int row = (thread / 16) * 4, col = (thread % 16) * 4;
    for (int i = 0; i < 4; ++i) {
      for (int j = 0; j < 4; ++j) {
        const int64_t r = m0 + row + i, cc = n0 + col + j;
        if (r < m && cc < n) c[r * n + cc] = acc[i][j] + (bias ? bias[cc] : 0.0f);
      }
    }
  }
};

}  // namespace pock::cuda
