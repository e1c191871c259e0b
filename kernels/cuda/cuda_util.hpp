// Small helpers shared by the cuda backend's kernel files.
#pragma once
#include <cstdint>
#include <limits>

#include "runtime/kernel.hpp"

namespace pock::cuda {

// Score of the cuda kernels. The score only ranks backends that share a memory space, and the
// cuda backend shares GPU memory with no other, so its value matters only against plugins.
constexpr int32_t kCudaScore = 100;

inline bool is_dtype(const pock_tensor_desc& t, pock_dtype dtype) { return t.rank >= 0 && t.dtype == dtype; }

inline bool fits_int(int64_t v) { return v >= 0 && v <= std::numeric_limits<int>::max(); }

// Rows of a [..., last] tensor: the product of every dimension but the last.
inline int64_t leading_rows(const pock_tensor_desc& t) {
  int64_t rows = 1;
  for (int d = 0; d + 1 < t.rank; ++d) rows *= t.dims[d];
  return rows;
}
inline int64_t last_dim(const pock_tensor_desc& t) { return t.rank > 0 ? t.dims[t.rank - 1] : 1; }

}  // namespace pock::cuda
