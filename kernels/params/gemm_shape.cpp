#include "kernels/params/gemm_shape.hpp"

#include <algorithm>
#include <string_view>

#include "pock/types.hpp"

namespace pock::params {
namespace {

int64_t dims_product(const pock_tensor_desc& t, int begin, int end) {
  int64_t n = 1;
  for (int i = begin; i < end; ++i) n *= t.dims[i];
  return n;
}

int64_t leading_rows(const pock_tensor_desc& t) { return t.rank > 0 ? dims_product(t, 0, t.rank - 1) : 1; }
int64_t last_dim(const pock_tensor_desc& t) { return t.rank > 0 ? t.dims[t.rank - 1] : 1; }

GemmShape matmul_shape(const pock_op_desc& op, const MatMulParams& p) {
  const pock_tensor_desc &a = op.inputs[0], &b = op.inputs[1], &y = op.outputs[0];
  GemmShape s;
  s.transpose_a = p.transpose_a;
  s.transpose_b = p.transpose_b;
  s.m = y.dims[y.rank - 2];
  s.n = y.dims[y.rank - 1];
  s.k = p.transpose_a ? a.dims[a.rank - 2] : a.dims[a.rank - 1];
  s.lda = std::max<int64_t>(1, a.dims[a.rank - 1]);
  s.ldb = std::max<int64_t>(1, b.dims[b.rank - 1]);
  if (!p.transpose_a && dims_product(b, 0, b.rank - 2) == 1) {
    s.m = dims_product(y, 0, y.rank - 1);
    return s;
  }
  s.a_offsets.clear();
  s.b_offsets.clear();
  broadcast_batch_offsets(a, b, y, &s.a_offsets, &s.b_offsets);
  for (int64_t& o : s.a_offsets) o *= a.dims[a.rank - 2] * a.dims[a.rank - 1];
  for (int64_t& o : s.b_offsets) o *= b.dims[b.rank - 2] * b.dims[b.rank - 1];
  return s;
}

}  // namespace

GemmShape gemm_shape(const pock_op_desc& op, const MatMulParams& p) {
  const std::string_view name = op.op;
  if (name == "MatMul") return matmul_shape(op, p);
  const pock_tensor_desc &first = op.inputs[0], &second = op.inputs[1];
  GemmShape s;
  if (name == "Linear") {  // x [M, K], w [N, K] read as its transpose
    s.m = leading_rows(first), s.n = second.dims[0], s.k = second.dims[1];
    s.transpose_b = true;
    s.lda = s.ldb = s.k;
  } else if (name == "LinearInputGrad") {  // dy [M, N] w [N, K]
    s.m = leading_rows(first), s.n = second.dims[1], s.k = last_dim(first);
    s.lda = s.k, s.ldb = s.n;
  } else {  // LinearWeightGrad: dyᵀ [N, M] x [M, K]
    s.m = last_dim(first), s.n = last_dim(second), s.k = leading_rows(first);
    s.transpose_a = true;
    s.lda = s.m, s.ldb = s.n;
  }
  s.lda = std::max<int64_t>(1, s.lda);
  s.ldb = std::max<int64_t>(1, s.ldb);
  return s;
}

void broadcast_batch_offsets(const pock_tensor_desc& a, const pock_tensor_desc& b, const pock_tensor_desc& y,
                             std::vector<int64_t>* a_index, std::vector<int64_t>* b_index) {
  const int rank = y.rank - 2;
  int64_t a_stride[kMaxRank] = {}, b_stride[kMaxRank] = {};
  auto strides = [&](const pock_tensor_desc& t, int64_t* out) {
    int64_t s = 1;
    for (int i = rank - 1; i >= 0; --i) {
      const int ti = i - (rank - (t.rank - 2));
      const int64_t d = ti >= 0 ? t.dims[ti] : 1;
      out[i] = d == 1 ? 0 : s;
      s *= d;
    }
  };
  strides(a, a_stride);
  strides(b, b_stride);
  const int64_t batches = dims_product(y, 0, rank);
  int64_t idx[kMaxRank] = {};
  for (int64_t o = 0; o < batches; ++o) {
    int64_t ia = 0, ib = 0;
    for (int d = 0; d < rank; ++d) {
      ia += idx[d] * a_stride[d];
      ib += idx[d] * b_stride[d];
    }
    a_index->push_back(ia);
    b_index->push_back(ib);
    for (int d = rank - 1; d >= 0; --d) {
      if (++idx[d] < y.dims[d]) break;
      idx[d] = 0;
    }
  }
}

}  // namespace pock::params
