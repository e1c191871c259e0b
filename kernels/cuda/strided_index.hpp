// Where each operand's element lies for a given output element, worked out once on the host (at
// prepare) and passed by value to the device functors: numpy broadcasting (elementwise ops,
// Expand, Where, the broadcast gradients) and strided gathers (Transpose, Slice). Dims of size 1
// are dropped and neighbouring dims every operand walks contiguously are merged, so a bias add is
// rank 2 and a same-shape op rank 1 whatever the tensors' ranks. Each operand then gets the
// cheapest access that describes it: dense (offset = output index), scalar, row (a contiguous
// block repeated: offset = index % period) or strided (a div/mod per remaining dim).
#pragma once
#include <cstdint>

#include "kernels/cuda/hd.hpp"
#include "kernels/cuda/index_math.hpp"
#include "kernels/ref/ref_util.hpp"  // numpy's broadcast strides, the same rule as ref
#include "pock/status.hpp"

namespace pock::cuda {

constexpr int kIndexMaxRank = POCK_TENSOR_MAX_RANK;

enum class Access : uint8_t { kDense, kScalar, kRow, kStrided };

template <int N>
struct StridedIndex {
  int rank = 0;
  int64_t dims[kIndexMaxRank] = {};  // of the output, collapsed
  int64_t strides[N][kIndexMaxRank] = {};
  int64_t base[N] = {};  // a Slice's first element; 0 otherwise
  Access access[N] = {};
  int64_t period[N] = {};  // kRow: the length of the repeated block

  // Offset of operand k's element for output element i.
  POCK_HD int64_t offset(int k, int64_t i) const {
    switch (access[k]) {
      case Access::kDense: return base[k] + i;
      case Access::kScalar: return base[k];
      case Access::kRow: return base[k] + index_mod(i, period[k]);
      default: break;
    }
    int64_t off = base[k];
    for (int d = rank - 1; d > 0; --d) {
      const int64_t q = index_div(i, dims[d]);
      off += (i - q * dims[d]) * strides[k][d];
      i = q;
    }
    return off + i * strides[k][0];  // the outermost dim needs no division
  }

  // True when no operand needs the div/mod walk (the fast path of the elementwise kernels).
  POCK_HD bool no_walk() const {
    for (int k = 0; k < N; ++k) {
      if (access[k] == Access::kStrided) return false;
    }
    return true;
  }
};

// ---- host side: building an index ---------------------------------------------------------------

// Drops size-1 dims, merges neighbours that every operand walks as one, then classifies each
// operand. `dims`/`strides` are the uncollapsed output dims and per-operand element strides.
template <int N>
StridedIndex<N> collapse_index(int rank, const int64_t* dims, const int64_t (*strides)[kIndexMaxRank],
                               const int64_t* base = nullptr) {
  StridedIndex<N> x;
  for (int k = 0; k < N; ++k) x.base[k] = base ? base[k] : 0;
  for (int d = 0; d < rank; ++d) {
    if (dims[d] == 1) continue;
    bool merge = x.rank > 0;
    for (int k = 0; k < N && merge; ++k) merge = strides[k][d] * dims[d] == x.strides[k][x.rank - 1];
    if (merge) {
      // The merged dim keeps the inner dim's stride and spans both.
      x.dims[x.rank - 1] *= dims[d];
      for (int k = 0; k < N; ++k) x.strides[k][x.rank - 1] = strides[k][d];
      continue;
    }
    x.dims[x.rank] = dims[d];
    for (int k = 0; k < N; ++k) x.strides[k][x.rank] = strides[k][d];
    ++x.rank;
  }
  for (int k = 0; k < N; ++k) {
    bool dense = true, scalar = true;
    int64_t contiguous = 1;
    for (int d = x.rank - 1; d >= 0; --d) {
      dense = dense && x.strides[k][d] == contiguous;
      scalar = scalar && x.strides[k][d] == 0;
      contiguous *= x.dims[d];
    }
    // A row: zero strides outside, contiguous inside (after merging that is rank 2, [0, 1]).
    const bool row = x.rank == 2 && x.strides[k][0] == 0 && x.strides[k][1] == 1;
    x.access[k] = dense ? Access::kDense : scalar ? Access::kScalar : row ? Access::kRow : Access::kStrided;
    x.period[k] = row ? x.dims[1] : 0;
  }
  return x;
}

// The index of a broadcasting op: `ins` broadcast against `out`.
template <int N>
StridedIndex<N> broadcast_index(const pock_tensor_desc& out, const pock_tensor_desc* const (&ins)[N]) {
  int64_t strides[N][kIndexMaxRank] = {};
  for (int k = 0; k < N; ++k) ref::broadcast_strides(*ins[k], out.rank, out.dims, strides[k]);
  return collapse_index<N>(out.rank, out.dims, strides);
}

// planned_kernel's plan (planned_kernel.hpp) for ops whose inputs 0..N-1 broadcast against output 0.
template <int N, typename Params>
Status plan_broadcast(const pock_op_desc& op, const Params&, StridedIndex<N>* index) {
  const pock_tensor_desc* ins[N];
  for (int k = 0; k < N; ++k) ins[k] = &op.inputs[k];
  *index = broadcast_index<N>(op.outputs[0], ins);
  return Status::ok();
}

// Row-major element strides of `t`.
inline void row_major_strides(const pock_tensor_desc& t, int64_t* strides) {
  int64_t stride = 1;
  for (int d = t.rank - 1; d >= 0; --d) {
    strides[d] = stride;
    stride *= t.dims[d];
  }
}

}  // namespace pock::cuda
