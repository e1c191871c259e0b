// The logic of the cuda reductions (ReduceSum/Mean/Max, and the reduction-shaped gradients
// SumToShape and ReduceMaxGrad's tie counts): how an input splits into kept dims (one output
// each, in output order) and reduced dims (walked for each output), worked out on the host at
// prepare; and the reducers, whose per-lane partials and combine the device kernels
// (reduce_launch.cuh) and the host tests both run.
#pragma once
#include <math.h>

#include <cstdint>

#include "kernels/cuda/hd.hpp"
#include "kernels/cuda/index_math.hpp"
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
      const int64_t q = index_div(i, dims[d]);
      off += (i - q * dims[d]) * strides[d];
      i = q;
    }
    return off + i * strides[0];  // one merged dim (the common case) costs no division
  }
};

// How the device kernels (reduce_launch.cuh) split the work: blocks of kReduceThreads threads.
constexpr int kReduceThreads = 256;
constexpr int kColumnLanes = 32, kColumnSplit = kReduceThreads / kColumnLanes;
// From this many elements per output, a whole block shares a row rather than a warp; below
// kShortRow, 8 threads do (a warp then reads 4 neighbouring short rows at once).
constexpr int64_t kBlockPerOutputFrom = 4096, kShortRow = 64;
constexpr int kShortRowGroup = 8;
// Fewer blocks than this leave SMs idle (16 on Orin, 132 on an H100): each output's elements are
// then cut into slices on separate blocks, so a full reduction or a bias gradient's few columns
// still fill the device. A slice keeps at least this many elements (rows, columns).
constexpr int64_t kTargetBlocks = 512;
constexpr int64_t kMinRowSlice = 2048, kMinColumnSlice = 64;

struct ReducePlan {
  DimWalk kept, reduced;
  int64_t outputs = 0;  // product of the kept dims
  int64_t length = 0;   // elements reduced into each output
  // The input's innermost dim is reduced: a group of threads shares an output and walks
  // contiguous memory. Otherwise neighbouring threads take neighbouring outputs.
  bool rows = true;
  // rows: threads per output (kShortRowGroup, 32: a warp, or kReduceThreads); columns: threads
  // that share an output's elements (kColumnSplit).
  int group = 32;
  // Each output's elements in `slices` pieces of `slice_length`; more than one slice leaves
  // partial results in the workspace ([slice][output]) for a second kernel to combine.
  int64_t slices = 1, slice_length = 0;
};

inline void set_split(ReducePlan& p, int group, int64_t slices) {
  p.group = group;
  slices = slices < 1 ? 1 : slices;
  p.slice_length = (p.length + slices - 1) / slices;
  p.slices = p.slice_length > 0 ? (p.length + p.slice_length - 1) / p.slice_length : 1;  // no empty slice
}

// The split for this device's kernels: as many slices as it takes to reach kTargetBlocks.
inline void split_work(ReducePlan& p) {
  const bool block_rows = p.rows && p.length >= kBlockPerOutputFrom;
  const int row_group = block_rows ? kReduceThreads : (p.length < kShortRow ? kShortRowGroup : 32);
  const int group = p.rows ? row_group : kColumnSplit;
  if (p.rows && !block_rows) return set_split(p, group, 1);  // rows under a block: never sliced
  const int64_t blocks = block_rows ? p.outputs : (p.outputs + kColumnLanes - 1) / kColumnLanes;
  const int64_t most = p.length / (block_rows ? kMinRowSlice : kMinColumnSlice);
  const int64_t wanted = blocks >= kTargetBlocks ? 1 : (kTargetBlocks + blocks - 1) / (blocks > 0 ? blocks : 1);
  set_split(p, group, wanted < most ? wanted : most);
}

// Scratch the plan needs: the partial results of its slices.
inline size_t reduce_workspace_bytes(const ReducePlan& p) {
  return p.slices > 1 ? static_cast<size_t>(p.slices * p.outputs) * sizeof(float) : 0;
}

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
  split_work(p);
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

// What one of `stride` threads sharing output o accumulates over its slice: elements
// begin + lane, begin + lane + stride, ... Threads then combine their partials (a warp shuffle
// tree on the device).
template <typename R>
POCK_HD float lane_partial(const ReducePlan& p, const R& r, int64_t o, int64_t slice, int64_t lane, int64_t stride) {
  const int64_t base = p.kept.offset(o);
  const int64_t begin = slice * p.slice_length;
  const int64_t end = begin + p.slice_length < p.length ? begin + p.slice_length : p.length;
  float acc = r.init();
  for (int64_t j = begin + lane; j < end; j += stride) acc = r.combine(acc, r.load(o, base + p.reduced.offset(j)));
  return acc;
}

// A slice's result: the output itself when there is one slice, a partial otherwise.
template <typename R>
POCK_HD void store_slice(const ReducePlan& p, const R& r, float* partials, int64_t o, int64_t slice, float acc) {
  if (p.slices == 1) {
    r.store(o, acc);
  } else {
    partials[slice * p.outputs + o] = acc;
  }
}

// The second kernel of a sliced reduction: each output combines its slices' partials in order.
template <typename R>
struct CombineSlices {
  ReducePlan plan;
  R r;
  const float* partials;
  POCK_HD void operator()(int64_t o) const {
    float acc = r.init();
    for (int64_t s = 0; s < plan.slices; ++s) acc = r.combine(acc, partials[s * plan.outputs + o]);
    r.store(o, acc);
  }
};

}  // namespace pock::cuda
