// The product out[r, p] = act(bias[r] + sum over k of A(r, k) in[k, p]) for a short reduction
// (k < depth of a few dozen) as direct register tiles, no GEMM library (short_product.cpp): each
// 6 x 16 tile of the output is 12 vector accumulators that start from the bias, take the whole
// reduction from `in`'s rows in place (16 contiguous columns of each), and are clamped and stored
// once. With so short a reduction a GEMM library spends its time around the multiply-adds: it
// zeroes or reads back the output around each block, packs its operands, and a bias and
// activation are two more passes over the output. Users: the 1x1 convolutions and their input
// gradients (conv_pointwise.cpp), im2col's short unfoldings (conv_im2col.cpp), and GEMMs with a
// short reduction such as a small batch's LinearWeightGrad (gemm_plan.cpp).
#pragma once
#include <cstddef>
#include <cstdint>

#include "kernels/cpu/activation_epilogue.hpp"
#include "kernels/cpu/thread_pool.hpp"

namespace pock::cpu {

inline constexpr int64_t kShortRows = 6;     // output rows of a register tile
inline constexpr int64_t kShortPixels = 16;  // output columns of a register tile: two 8-float vectors
inline constexpr int64_t kShortChunk = 64;   // columns of one task: its input columns stay in L1 across the rows

// The deepest reduction for which the built-in rules take the tiles over sgemm (the tiles run any
// depth when an op names them, e.g. through `pockc tune`).
inline constexpr int64_t kShortProductMaxDepth = 64;

struct ShortProduct {
  // A(r, k) = a[r / kShortRows * block_stride + r % kShortRows * row_stride + k * depth_stride]:
  // packed into tile order (pack_short_rows below), or read in place.
  const float* a;
  int64_t block_stride, row_stride, depth_stride;
  const float* bias;  // [rows] or null
  const float* in;    // [depth][in_stride]: its rows in_stride floats apart (0: plane)
  float* out;         // [rows][plane]
  int64_t rows, depth, plane;
  int64_t in_stride;
  float lo, hi;  // the fused activation as a clamp (activation_epilogue.hpp)
};

// A read in place: A(r, k) = a[r * row_stride + k * depth_stride].
inline ShortProduct short_product_in_place(const float* a, int64_t row_stride, int64_t depth_stride) {
  ShortProduct p{};
  p.a = a;
  p.block_stride = kShortRows * row_stride;
  p.row_stride = row_stride;
  p.depth_stride = depth_stride;
  p.lo = -__builtin_inff();
  p.hi = __builtin_inff();
  return p;
}

// A packed by pack_short_rows.
inline ShortProduct short_product_packed(const float* packed, int64_t depth) {
  ShortProduct p = short_product_in_place(packed, 1, kShortRows);
  p.block_stride = depth * kShortRows;
  return p;
}

// A row stride for a scratch copy of `plane` columns whose rows spread over L1's sets: rows a
// multiple of 2 KB apart share a few sets and evict each other inside a tile (see
// short_product.cpp), so such a plane gets one more cache line per row.
int64_t short_product_input_stride(int64_t plane);

// Every output row of columns [begin, end), on the calling thread.
void short_product_columns(const ShortProduct& p, int64_t begin, int64_t end);

// The whole product, its columns split over the pool in chunks of kShortChunk.
void run_short_product(const ShortProduct& p, pthreadpool_t pool);

// A packed into tile order (for ShortProduct: block_stride depth * kShortRows, row_stride 1,
// depth_stride kShortRows), from A(i, k) = a[i * row_stride + k * depth_stride];
// packed_short_rows_floats(rows, depth) floats, rows past the last zero.
size_t packed_short_rows_floats(int64_t rows, int64_t depth);
void pack_short_rows(const float* a, int64_t row_stride, int64_t depth_stride, int64_t rows, int64_t depth,
                     float* packed);

}  // namespace pock::cpu
