#include "kernels/cpu/strided_walk.hpp"

namespace pock::cpu {

bool make_strided_walk(int rank, const int64_t* out_dims, int operands, const int64_t (*operand_strides)[kWalkMaxRank],
                       const int64_t* base, StridedWalk* walk) {
  if (rank > kWalkMaxRank || operands > kWalkMaxOperands) return false;
  StridedWalk w;
  w.operands = operands;
  w.rank = 0;
  for (int k = 0; k < operands; ++k) w.base[k] = base ? base[k] : 0;
  for (int d = 0; d < rank; ++d) {
    if (out_dims[d] == 1) continue;  // a size-1 dim moves nothing, whatever its strides
    if (out_dims[d] == 0) {          // nothing to walk
      w.rank = 1;
      w.dims[0] = 0;
      *walk = w;
      return true;
    }
    // Merge into the previous dim when every operand's stride there is this dim's times its size
    // (the output is row-major, so it always is contiguous across the pair).
    bool merge = w.rank > 0;
    for (int k = 0; merge && k < operands; ++k) {
      merge = w.strides[k][w.rank - 1] == operand_strides[k][d] * out_dims[d];
    }
    if (merge) {
      w.dims[w.rank - 1] *= out_dims[d];
      for (int k = 0; k < operands; ++k) w.strides[k][w.rank - 1] = operand_strides[k][d];
      continue;
    }
    w.dims[w.rank] = out_dims[d];
    for (int k = 0; k < operands; ++k) w.strides[k][w.rank] = operand_strides[k][d];
    ++w.rank;
  }
  if (w.rank == 0) {  // a single element
    w.rank = 1;
    w.dims[0] = 1;
    for (int k = 0; k < operands; ++k) w.strides[k][0] = 1;
  }
  *walk = w;
  return true;
}

void broadcast_strides(const pock_tensor_desc& in, const pock_tensor_desc& out, int64_t* strides) {
  int64_t stride = 1;
  for (int d = out.rank - 1, i = in.rank - 1; d >= 0; --d, --i) {
    if (i < 0) {
      strides[d] = 0;
      continue;
    }
    strides[d] = in.dims[i] == 1 ? 0 : stride;
    stride *= in.dims[i];
  }
}

StridedWalk binary_broadcast_walk(const KernelCall& c) {
  const pock_tensor_desc& out = c.out(0);
  int64_t strides[2][kWalkMaxRank];
  broadcast_strides(c.in(0), out, strides[0]);
  broadcast_strides(c.in(1), out, strides[1]);
  StridedWalk w;
  make_strided_walk(out.rank, out.dims, 2, strides, nullptr, &w);
  return w;
}

}  // namespace pock::cpu
