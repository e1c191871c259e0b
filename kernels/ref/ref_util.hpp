// Helpers for reference kernels: plain loops, written to be obviously right rather than fast.
#pragma once
#include <cstdint>

#include "ir/float16.hpp"
#include "kernels/bf16_round.h"
#include "runtime/kernel.hpp"

namespace pock::ref {

// A GEMM operand as compute "bf16" reads it (rounded to bf16, kernels/bf16_round.h) or as it is;
// in double, since the ref GEMMs sum in double (a product of two bf16 values is exact in f32).
inline double gemm_operand(float v, bool bf16) { return bf16 ? pock_round_bf16(v) : v; }

// Input `i` of a GEMM as gemm_operand reads its elements: an f32 tensor (rounded with compute
// "bf16"), or a bf16 one (the compiler's shared copy of an activation, already rounded: widened
// exactly, so both give the same values).
struct GemmOperand {
  const void* data;
  bool stored_bf16;
  bool round;
  double operator[](int64_t e) const {
    return stored_bf16 ? pock_bf16_to_f32(static_cast<const uint16_t*>(data)[e])
                       : gemm_operand(static_cast<const float*>(data)[e], round);
  }
};
inline GemmOperand gemm_operand_of(const KernelCall& c, int i, bool bf16) {
  return {c.in(i).data, c.in(i).dtype == POCK_BF16, bf16};
}

// How a dtype's elements are read into the type its arithmetic runs in and written back: f32 and
// the integers as themselves, f16 and bf16 in float (exactly; rounded back to nearest even).
template <typename T>
struct Plain {
  using Stored = T;
  static T load(T v) { return v; }
  static T store(T v) { return v; }
};
struct Half {
  using Stored = uint16_t;
  static float load(uint16_t h) { return half_to_float(h); }
  static uint16_t store(float f) { return float_to_half(f); }
};
struct BFloat16 {
  using Stored = uint16_t;
  static float load(uint16_t h) { return bf16_to_float(h); }
  static uint16_t store(float f) { return float_to_bf16(f); }
};

// Element strides of `t` aligned to an output of rank `rank` (0 where `t` broadcasts).
inline void broadcast_strides(const pock_tensor_desc& t, int rank, const int64_t* out_dims, int64_t* strides) {
  int64_t stride = 1;
  for (int i = rank - 1; i >= 0; --i) {
    const int ti = i - (rank - t.rank);
    const int64_t d = ti >= 0 ? t.dims[ti] : 1;
    strides[i] = (d == 1 && out_dims[i] != 1) ? 0 : stride;
    stride *= d;
  }
}

// Calls f(out_index, index_in_each_input...) over every output element of a broadcast op.
template <int N, typename F>
void for_each_broadcast(const pock_tensor_desc& out, const pock_tensor_desc* const (&ins)[N], F&& f) {
  const int rank = out.rank;
  int64_t strides[N][kMaxRank] = {};
  for (int k = 0; k < N; ++k) broadcast_strides(*ins[k], rank, out.dims, strides[k]);
  int64_t idx[kMaxRank] = {};
  int64_t off[N] = {};
  const int64_t total = numel(out);
  for (int64_t o = 0; o < total; ++o) {
    if constexpr (N == 1) f(o, off[0]);
    if constexpr (N == 2) f(o, off[0], off[1]);
    if constexpr (N == 3) f(o, off[0], off[1], off[2]);
    for (int d = rank - 1; d >= 0; --d) {
      ++idx[d];
      for (int k = 0; k < N; ++k) off[k] += strides[k][d];
      if (idx[d] < out.dims[d]) break;
      for (int k = 0; k < N; ++k) off[k] -= strides[k][d] * idx[d];
      idx[d] = 0;
    }
  }
}

// A tensor seen as [outer, n, inner] around one axis: line (o, i) holds the n elements
// o * n * inner + i + k * inner.
struct AxisLines {
  int64_t outer = 1, n = 1, inner = 1;
};
inline AxisLines lines_along(const pock_tensor_desc& t, int axis) {
  AxisLines l;
  for (int d = 0; d < axis; ++d) l.outer *= t.dims[d];
  for (int d = axis + 1; d < t.rank; ++d) l.inner *= t.dims[d];
  l.n = t.dims[axis];
  return l;
}

// The index of the maximum (kMax) or minimum of row[0], row[stride], ..., row[(n - 1) stride].
// NaN counts as the extremum (numpy's and PyTorch's argmax); the first occurrence wins unless `last`.
template <bool kMax>
int64_t extremum_index(const float* row, int64_t n, int64_t stride, bool last) {
  int64_t best = 0;
  for (int64_t k = 1; k < n; ++k) {
    const float v = row[k * stride], b = row[best * stride];
    const bool tie = v == b || (v != v && b != b);
    const bool better = b == b && (v != v || (kMax ? v > b : v < b));
    if (better || (last && tie)) best = k;
  }
  return best;
}

}  // namespace pock::ref
