// The three transforms of Winograd F(4x4,3x3) (Lavin and Gray, "Fast Algorithms for Convolutional
// Neural Networks", 2016), with the interpolation points 0, -1, 1, 1/2, -2 and infinity (the .cpp
// says why these):
//   weight  U = G g G^T     (3x3 -> 6x6)
//   input   V = B^T d B     (6x6 input tile -> 6x6)
//   output  Y = A^T M A     (6x6 -> 4x4 output tile), M the elementwise sums over channels of U V
// The 36 elements of a transformed tile, xi = 6 * row + column, live in 36 separate matrices so
// that the sums over channels become 36 independent GEMMs (conv_winograd.cpp). Each transform is
// vectorized over what lies contiguous in those matrices (input channels of U, tiles of V and M)
// and compiled per x86 level (simd.hpp).
#pragma once
#include <cstdint>

#include "kernels/cpu/activation_epilogue.hpp"

namespace pock::cpu::winograd {

constexpr int64_t kTile = 4;       // output pixels per tile side
constexpr int64_t kInputTile = 6;  // input pixels per tile side (kTile + 3 - 1)
constexpr int64_t kElements = kInputTile * kInputTile;
// Tiles of one tile row transformed per call: one AVX-512 vector of lanes, and the row buffers
// stay small enough to live on the stack (no allocation, no per-thread scratch).
constexpr int64_t kTilesPerCall = 16;

// u[xi * rows * cols + r * cols + c] = (G g G^T)[xi] for the 3x3 kernel g of row r and column c in
// [0, cols), for one row r of an OIHW weight w [rows, cols, 3, 3]: g = w[r, c], or with `rotate`
// w[r, c] rotated by 180 degrees (the input gradient's kernel, whose GEMMs then read U
// transposed: the channel axes swap there, not here, so that both read w alike).
void weight_row(const float* w, int64_t r, int64_t rows, int64_t cols, bool rotate, float* u);

// One channel plane's tiles (ty, tx0 + i) for i in [0, count), count <= kTilesPerCall:
// v[xi * v_stride + i] = (B^T d B)[xi], d the 6x6 input window at row 4 ty - pad_top and column
// 4 (tx0 + i) - pad_left of the h x w plane `x`, zero outside it. Writes all kTilesPerCall lanes
// of each v row: the lanes from `count` on get values of no use, which the caller either
// overwrites later (the next tiles of the same row) or leaves in padding after the row.
struct InputTiles {
  const float* x;
  int64_t h, w, pad_top, pad_left;
  int64_t ty, tx0, count;
};
void input_tiles(const InputTiles& in, float* v, int64_t v_stride);

// The inverse for one output channel plane: rows 4 ty .. 4 ty + 3 and columns 4 (tx0 + i) ..
// 4 (tx0 + i) + 3 of the out_h x out_w plane `y` (clipped to it) = clamp(bias + (A^T M A)), where
// M[xi] = m[xi * m_stride + i]. Reads all kTilesPerCall lanes of each m row (the lanes from
// `count` on are dropped), so each row needs kTilesPerCall - count readable floats after it.
struct OutputTiles {
  float* y;
  int64_t out_h, out_w;
  int64_t ty, tx0, count;
  float bias;
  Clamp clamp;
};
void output_tiles(const float* m, int64_t m_stride, const OutputTiles& out);

}  // namespace pock::cpu::winograd
