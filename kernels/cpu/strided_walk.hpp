// A walk over an output tensor in row-major order while up to two operands follow it with their own
// element strides: 0 where an operand broadcasts, the input's strides permuted for a Transpose,
// scaled by the step for a Slice. Adjacent dims merge first wherever the output and every operand
// stay contiguous across them, so an attention-mask add [8,12,128,128] + [8,1,1,128] walks as
// [8][1536][128] with the mask's stride 0 over the middle dim, and a GQA Expand [4,3,1,128,64] ->
// [4,3,3,128,64] as rows of 8192 contiguous floats. The caller gets whole innermost runs, which its
// vector loops (or memcpy) handle; what used to need the per-element index arithmetic of the ref
// kernels becomes a few calls per row.
#pragma once
#include <algorithm>
#include <cstdint>

#include "kernels/cpu/thread_pool.hpp"
#include "runtime/kernel.hpp"

namespace pock::cpu {

constexpr int kWalkMaxRank = 8;
constexpr int kWalkMaxOperands = 2;

struct StridedWalk {
  int rank = 1;  // after merging and dropping size-1 dims; at least 1
  int operands = 0;
  int64_t dims[kWalkMaxRank] = {1};
  int64_t strides[kWalkMaxOperands][kWalkMaxRank] = {};
  int64_t base[kWalkMaxOperands] = {};  // each operand's element at output index 0

  int64_t inner() const { return dims[rank - 1]; }
  int64_t inner_stride(int operand) const { return strides[operand][rank - 1]; }
  int64_t rows() const {
    int64_t n = 1;
    for (int d = 0; d + 1 < rank; ++d) n *= dims[d];
    return n;
  }
};

// Builds the walk of an output of `rank` dims; operand_strides[k][d] is operand k's element stride
// along output dim d and base[k] its offset at index 0 (null: all 0). False when rank is too big.
bool make_strided_walk(int rank, const int64_t* out_dims, int operands, const int64_t (*operand_strides)[kWalkMaxRank],
                       const int64_t* base, StridedWalk* walk);

// Strides of an input broadcast (NumPy rules: right-aligned, size-1 dims repeat) to `out`.
void broadcast_strides(const pock_tensor_desc& in, const pock_tensor_desc& out, int64_t* strides);

// Calls f(out_offset, offsets) for rows [begin, end) of the walk, offsets[k] being operand k's
// element at the start of the row; a row is inner() consecutive output elements.
template <typename F>
void for_each_row(const StridedWalk& w, int64_t begin, int64_t end, F&& f) {
  if (begin >= end) return;
  const int outer = w.rank - 1;
  int64_t index[kWalkMaxRank] = {};
  int64_t offsets[kWalkMaxOperands] = {};
  for (int k = 0; k < w.operands; ++k) offsets[k] = w.base[k];
  for (int64_t rest = begin, d = outer - 1; d >= 0; --d) {
    index[d] = rest % w.dims[d];
    rest /= w.dims[d];
    for (int k = 0; k < w.operands; ++k) offsets[k] += index[d] * w.strides[k][d];
  }
  const int64_t inner = w.inner();
  for (int64_t r = begin; r < end; ++r) {
    f(r * inner, offsets);
    for (int d = outer - 1; d >= 0; --d) {
      for (int k = 0; k < w.operands; ++k) offsets[k] += w.strides[k][d];
      if (++index[d] < w.dims[d]) break;
      for (int k = 0; k < w.operands; ++k) offsets[k] -= w.strides[k][d] * w.dims[d];
      index[d] = 0;
    }
  }
}

// The walk of a binary op's output with its inputs 0 and 1 as operands 0 and 1, broadcast to it.
StridedWalk binary_broadcast_walk(const KernelCall& c);

// for_each_row over every row of the walk, split over `pool` in tiles of at least
// `min_tile_elements` outputs (whole rows), so that small rows are not dispatched one by one.
template <typename F>
void for_each_row_parallel(const StridedWalk& w, pthreadpool_t pool, size_t min_tile_elements, F&& f) {
  const int64_t inner = std::max<int64_t>(w.inner(), 1);
  const size_t rows = static_cast<size_t>(w.rows());
  const size_t tile = balanced_tile(pool, rows, (min_tile_elements + static_cast<size_t>(inner) - 1) / static_cast<size_t>(inner));
  parallel_for(pool, rows, tile, [&](size_t begin, size_t end) {
    for_each_row(w, static_cast<int64_t>(begin), static_cast<int64_t>(end), f);
  });
}

}  // namespace pock::cpu
