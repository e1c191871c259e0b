// How a row-major GEMM maps onto column-major cuBLAS, as plain data so that tests/cuda_logic
// checks the mapping on the host (a naive column-major GEMM fed these arguments must equal the
// row-major product).
//
// A row-major [r, c] matrix is, read column-major, its [c, r] transpose. So the row-major
// C = op(A) op(B) is computed as the column-major Cᵀ = op(B)ᵀ op(A)ᵀ: B goes first, each operand
// keeps its own transpose flag, and each leading dimension is the stored row length.
#pragma once
#include <cstdint>

namespace pock::cuda {

// Row-major C[m, n] = op(A)[m, k] op(B)[k, n], op = transpose when asked.
struct GemmShape {
  bool ta = false, tb = false;
  int64_t m = 0, n = 0, k = 0;
};

// The column-major call: out[rows, cols] = op(first)[rows, depth] op(second)[depth, cols], with
// first = B's storage and second = A's.
struct ColumnMajorGemm {
  bool transpose_first = false, transpose_second = false;
  int64_t rows = 0, cols = 0, depth = 0;
  int64_t ld_first = 0, ld_second = 0, ld_out = 0;
};

inline ColumnMajorGemm column_major(const GemmShape& s) {
  ColumnMajorGemm g;
  g.transpose_first = s.tb;
  g.transpose_second = s.ta;
  g.rows = s.n;
  g.cols = s.m;
  g.depth = s.k;
  g.ld_first = s.tb ? s.k : s.n;   // B stored [n, k] when transposed, else [k, n]
  g.ld_second = s.ta ? s.m : s.k;  // A stored [k, m] when transposed, else [m, k]
  g.ld_out = s.n;
  return g;
}

}  // namespace pock::cuda
