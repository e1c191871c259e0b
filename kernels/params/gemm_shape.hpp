// The row-major GEMM that each op of the linalg family is, worked out once at prepare from its
// operands' shapes, for backends that run them as GEMMs:
//   MatMul            y[..., M, N] = op(a[..., M, K]) op(b[..., K, N]), batch dims broadcast
//   Linear            y[..., N]    = x[..., K] wᵀ            (w [N, K])
//   LinearInputGrad   dx[..., K]   = dy[..., N] w            (w [N, K])
//   LinearWeightGrad  dw[N, K]     = dyᵀ x                   (dy [..., N], x [..., K])
// The leading dims of x / dy fold into M (M = their product).
#pragma once
#include <cstdint>
#include <vector>

#include "kernels/params/linalg.hpp"
#include "pock/backend.h"

namespace pock::params {

// y's i-th [m, n] block (leading dimension n) = op(a + a_offsets[i]) op(b + b_offsets[i]), a and
// b row-major with leading dimensions lda and ldb: op(a) is [m, k], op(b) [k, n].
struct GemmShape {
  int64_t m = 0, n = 0, k = 0;
  bool transpose_a = false, transpose_b = false;
  int64_t lda = 1, ldb = 1;
  std::vector<int64_t> a_offsets{0}, b_offsets{0};  // in elements
};

// For an op whose shapes the schema checked; p: its parsed attributes (MatMul's transposes).
// A MatMul whose b is one matrix and whose a is not transposed is one tall GEMM (a's batches are
// contiguous rows).
GemmShape gemm_shape(const pock_op_desc& op, const MatMulParams& p);

// For each of y's batch matrices (numpy broadcast of a's and b's dims before the last two), the
// index of a's and of b's matrix that it multiplies.
void broadcast_batch_offsets(const pock_tensor_desc& a, const pock_tensor_desc& b, const pock_tensor_desc& y,
                             std::vector<int64_t>* a_index, std::vector<int64_t>* b_index);

}  // namespace pock::params
