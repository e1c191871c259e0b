// A tensor seen as [outer, len, inner] around one axis: what kernels that work along an axis
// (normalization over channels, running sums) walk, in every backend.
#pragma once
#include <cstdint>

#include "pock/backend.h"

namespace pock {

struct AxisView {
  int64_t outer = 1, len = 1, inner = 1;
};

inline AxisView view_around(const pock_tensor_desc& x, int axis) {
  AxisView v;
  for (int d = 0; d < axis; ++d) v.outer *= x.dims[d];
  v.len = x.dims[axis];
  for (int d = axis + 1; d < x.rank; ++d) v.inner *= x.dims[d];
  return v;
}

}  // namespace pock
