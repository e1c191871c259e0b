// Integer products for frozen block-quantized weights (LinearQ / LinearQInputGrad with compute
// "int8"; kernels/ref/block_quant.cpp defines the arithmetic): AVX-512 VNNI dot products
// (vpdpbusd, 64 int8 multiply-adds an instruction against 16 f32 FMAs), with the block scales
// applied to int32 partial sums once per 32 values.
//
// The weight is rearranged once (Int8Pack, shared by every op over it through the KernelScope)
// so that one 64-byte load feeds 16 output columns with 4 consecutive values each: u8 integers
// u with value = d u + m per (column, block) — q4 blocks keep two values a byte and their f16
// scales (5 bits a weight, as stored), q8 blocks store q + 128 (vpdpbusd multiplies unsigned by
// signed bytes; the 128 moves into m = -128 d). The activations are the signed side: each row quantized
// per 32-value block, a[r, b, :] with scale s[r, b] and t[r, b] = s sum(a), so that
//   y[r, c] = bias[c] + sum_b d[c, b] s[r, b] (sum u a) + m[c, b] t[r, b].
// For the input gradient the pack holds the weight's columns requantized to q8 per 32 rows,
// exactly as ref does, and the "activations" are dy's rows.
#pragma once
#include <cstdint>
#include <memory>

#include "ir/block_format.hpp"
#include "kernels/cpu/thread_pool.hpp"
#include "runtime/mapped_file.hpp"

namespace pock::cpu {

struct Int8Pack {
  int64_t cols = 0;    // output columns (padded to groups of 16 in the data)
  int64_t blocks = 0;  // 32-value blocks along the reduction
  bool nibbles = false;
  // The scales, as compact as exactness allows: d in f16 where it came from the file's f16 (the
  // rows of a weight), else f32 (requantized columns); m stored (f16, q4_1) or implied by d:
  // m = -min_from_d d (8 for q4_0, 128 for q8 stored as q + 128).
  bool half_d = true;
  int min_from_d = 0;
  AlignedBuffer data;  // [group][block]: the integers (256 or 512 bytes), d[16], m[16]?, padding to 64
  int64_t groups() const { return (cols + 15) / 16; }
  int64_t int_bytes() const { return nibbles ? 256 : 512; }
  int64_t d_bytes() const { return half_d ? 32 : 64; }
  int64_t block_bytes() const { return (int_bytes() + d_bytes() + (min_from_d == 0 ? 32 : 0) + 63) / 64 * 64; }
};

// What runs the products here: AVX-512 VNNI (vpdpbusd), else AVX2 (vpmaddubsw + vpmaddwd, about a
// third of the speed), else nothing (the ops fall to ref). POCK_INT8_ISA=avx2 picks AVX2 on a
// VNNI machine (tests of both paths).
enum class Int8Isa { kNone, kAvx2, kAvx512Vnni };
Int8Isa int8_isa();
bool int8_gemm_supported();

// For y = x Wᵀ: W's n rows of `format` blocks (q8_0, q4_0, q4_1), k values each.
std::shared_ptr<Int8Pack> pack_weight_rows(BlockFormat format, const uint8_t* w, int64_t n, int64_t k, int64_t row_bytes,
                                           pthreadpool_t pool);
// For dx = dy W: W's k columns, each requantized to q8 per 32 of its n values (n % 32 == 0).
std::shared_ptr<Int8Pack> pack_weight_columns(BlockFormat format, const uint8_t* w, int64_t n, int64_t k, int64_t row_bytes,
                                              pthreadpool_t pool);

// Row j of a rows pack decoded to f32 (d u + m): the values ref decodes from the blocks.
void decode_pack_row(const Int8Pack& pack, int64_t j, float* out);

// Rows [m, len] (len % 32 == 0) quantized per 32-value block: a [m, len], s and t [m, len / 32].
void quantize_rows(const float* x, int64_t m, int64_t len, int8_t* a, float* s, float* t, pthreadpool_t pool);

// y [m, pack.cols] (row stride ldy) = bias + the products above; bias may be null.
void int8_gemm(const Int8Pack& pack, const int8_t* a, const float* s, const float* t, int64_t m, const float* bias, float* y,
               int64_t ldy, pthreadpool_t pool);

}  // namespace pock::cpu
