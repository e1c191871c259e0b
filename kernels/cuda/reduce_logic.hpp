// The logic of the cuda reductions (ReduceSum/Mean/Max, and the reduction-shaped gradients
// SumToShape and ReduceMaxGrad's tie counts): how an input splits into kept dims (one output
// each, in output order) and reduced dims (walked for each output), worked out on the host at
// prepare; and the reducers, whose per-lane partials and combine the device kernels
// (reduce_launch.cuh) and the host tests both run.
#pragma once
#include <math.h>

#include <cstdint>

#include "kernels/cuda/hd.hpp"
#include "pock/backend.h"

namespace pock::cuda {

// A set of input dims walked as one index, last dim fastest: sizes and element strides.
struct DimWalk {
  int rank = 0;
  int64_t dims[POCK_TENSOR_MAX_RANK] = {};
  int64_t strides[POCK_TENSOR_MAX_RANK] = {};

  POCK_HD int64_t offset(int64_t i) const {
    if (rank == 0) return 0;
    int64_t off = 0;
    for (int d = rank - 1; d > 0; --d) {
      const int64_t q = i / dims[d];
      off += (i - q * dims[d]) * strides[d];
      i = q;
    }
    return off + i * strides[0];  // one merged dim (the common case) costs no division
  }
};

struct ReducePlan {
  DimWalk kept, reduced;
  int64_t outputs = 0;  // product of the kept dims
  int64_t length = 0;   // elements reduced into each output
  // The input's innermost dim is reduced: a group of threads shares an output and walks
  // contiguous memory. Otherwise neighbouring threads take neighbouring outputs.
  bool rows = true;
};

// Appends a dim to a walk, merging it into the previous one when that continues it in memory;
// size-1 dims add nothing.
inline void push_dim(DimWalk& w, int64_t size, int64_t stride) {
  if (size == 1) return;
  if (w.rank > 0 && w.strides[w.rank - 1] == stride * size) {
    w.dims[w.rank - 1] *= size;
    w.strides[w.rank - 1] = stride;
    return;
  }
  w.dims[w.rank] = size;
  w.strides[w.rank] = stride;
  ++w.rank;
}

// `reduced[d]` says which dims of the row-major input `x` are reduced.
inline ReducePlan reduce_plan(const pock_tensor_desc& x, const bool* reduced) {
  ReducePlan p;
  int64_t strides[POCK_TENSOR_MAX_RANK] = {};
  for (int64_t d = x.rank - 1, s = 1; d >= 0; --d) {
    strides[d] = s;
    s *= x.dims[d];
  }
  p.outputs = p.length = 1;
  int innermost_reduced = -1;
  for (int d = 0; d < x.rank; ++d) {
    if (reduced[d]) {
      p.length *= x.dims[d];
      push_dim(p.reduced, x.dims[d], strides[d]);
    } else {
      p.outputs *= x.dims[d];
      push_dim(p.kept, x.dims[d], strides[d]);
    }
    if (x.dims[d] != 1) innermost_reduced = reduced[d] ? 1 : 0;
  }
  p.rows = innermost_reduced != 0;
  return p;
}

// ---- reducers: Acc init(); Acc load(o, offset); Acc combine(Acc, Acc); void store(o, Acc) -------

struct SumReducer {
  const float* x;
  float* y;
  float divisor;  // 1 for a sum; the count for a mean (ref divides, and so does this)
  POCK_HD float init() const { return 0.0f; }
  POCK_HD float load(int64_t, int64_t off) const { return x[off]; }
  POCK_HD float combine(float a, float b) const { return a + b; }
  POCK_HD void store(int64_t o, float acc) const { y[o] = divisor == 1.0f ? acc : acc / divisor; }
};

// NaN wins, as in PyTorch; an empty reduction gives -inf, as ref's does.
struct MaxReducer {
  const float* x;
  float* y;
  POCK_HD float init() const { return -INFINITY; }
  POCK_HD float load(int64_t, int64_t off) const { return x[off]; }
  POCK_HD float combine(float a, float b) const { return (a != a || a > b) ? a : b; }
  POCK_HD void store(int64_t o, float acc) const { y[o] = acc; }
};

// ReduceMaxGrad's first pass: how many elements of each reduced group equal its maximum.
struct TieCountReducer {
  const float* x;
  const float* ymax;  // one per output
  float* ties;
  POCK_HD float init() const { return 0.0f; }
  POCK_HD float load(int64_t o, int64_t off) const { return x[off] == ymax[o] ? 1.0f : 0.0f; }
  POCK_HD float combine(float a, float b) const { return a + b; }
  POCK_HD void store(int64_t o, float acc) const { ties[o] = acc; }
};

// What one of `stride` threads sharing output o accumulates: elements lane, lane + stride, ...
// Threads then combine their partials (a warp shuffle tree on the device).
template <typename R>
POCK_HD float lane_partial(const ReducePlan& p, const R& r, int64_t o, int64_t lane, int64_t stride) {
  const int64_t base = p.kept.offset(o);
  float acc = r.init();
  for (int64_t j = lane; j < p.length; j += stride) acc = r.combine(acc, r.load(o, base + p.reduced.offset(j)));
  return acc;
}

}  // namespace pock::cuda
