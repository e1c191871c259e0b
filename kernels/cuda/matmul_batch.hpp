// Which matrices of A and B each output matrix of a batched MatMul multiplies: the batch dims
// (all but the last two) broadcast as numpy does, aligned on the right — as ref's MatMul does.
// Host logic, header-only, so tests/cuda_logic checks it without a GPU.
#pragma once
#include <cstdint>
#include <vector>

#include "pock/backend.h"

namespace pock::cuda {

struct MatrixBatch {
  int64_t count = 1;                     // output matrices
  std::vector<int64_t> a_index, b_index;  // per output matrix: which matrix of A and of B
  bool strided = true;                   // each index is o (stride 1) or always 0 (stride 0)
  bool stride_a = true, stride_b = true; // with `strided`: A (B) advances with o; else stays at 0
};

inline int64_t matrix_batch_count(const pock_tensor_desc& t) {
  int64_t n = 1;
  for (int d = 0; d + 2 < t.rank; ++d) n *= t.dims[d];
  return n;
}

// The index of input matrix for output matrix `o`, `in` and `out` being [..., r, c] tensors.
inline int64_t broadcast_matrix_index(const pock_tensor_desc& in, const pock_tensor_desc& out, int64_t o) {
  const int out_batch = out.rank - 2, in_batch = in.rank - 2;
  int64_t index = 0, stride = 1;
  for (int d = out_batch - 1, e = in_batch - 1; d >= 0; --d, --e) {
    const int64_t coord = o % out.dims[d];
    o /= out.dims[d];
    if (e < 0) continue;
    if (in.dims[e] != 1) index += coord * stride;
    stride *= in.dims[e];
  }
  return index;
}

inline MatrixBatch matrix_batch(const pock_tensor_desc& a, const pock_tensor_desc& b, const pock_tensor_desc& y) {
  MatrixBatch m;
  m.count = matrix_batch_count(y);
  m.a_index.resize(static_cast<size_t>(m.count));
  m.b_index.resize(static_cast<size_t>(m.count));
  bool a_follows = true, a_fixed = true, b_follows = true, b_fixed = true;
  for (int64_t o = 0; o < m.count; ++o) {
    const int64_t i = broadcast_matrix_index(a, y, o), j = broadcast_matrix_index(b, y, o);
    m.a_index[static_cast<size_t>(o)] = i;
    m.b_index[static_cast<size_t>(o)] = j;
    a_follows = a_follows && i == o;
    a_fixed = a_fixed && i == 0;
    b_follows = b_follows && j == o;
    b_fixed = b_fixed && j == 0;
  }
  m.strided = (a_follows || a_fixed) && (b_follows || b_fixed);
  m.stride_a = !a_fixed;
  m.stride_b = !b_fixed;
  return m;
}

}  // namespace pock::cuda
