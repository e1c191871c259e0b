// Runs a reduction of kernels/cuda/reduce_logic.hpp on the host as the device kernels split it:
// per (output, slice), `plan.group` threads each accumulating every group-th element, their
// partials combined; with several slices, the partials combined by CombineSlices.
#pragma once
#include <vector>

#include "kernels/cuda/reduce_logic.hpp"

namespace pock::test {

template <typename R>
void host_reduce(const cuda::ReducePlan& p, const R& r) {
  std::vector<float> partials(static_cast<size_t>(p.slices * p.outputs));
  for (int64_t o = 0; o < p.outputs; ++o) {
    for (int64_t s = 0; s < p.slices; ++s) {
      float acc = r.init();
      for (int64_t lane = 0; lane < p.group; ++lane) acc = r.combine(acc, cuda::lane_partial(p, r, o, s, lane, p.group));
      cuda::store_slice(p, r, partials.data(), o, s, acc);
    }
  }
  if (p.slices > 1) {
    const cuda::CombineSlices<R> combine{p, r, partials.data()};
    for (int64_t o = 0; o < p.outputs; ++o) combine(o);
  }
}

// The same with another split than the plan's own (thread count per output, slices).
template <typename R>
void host_reduce(cuda::ReducePlan p, const R& r, int group, int64_t slices) {
  cuda::set_split(p, group, slices);
  host_reduce(p, r);
}

}  // namespace pock::test
