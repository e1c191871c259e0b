// Runs a reduction of kernels/cuda/reduce_logic.hpp on the host as the device kernels split it:
// `group` threads per output, each accumulating every group-th element, partials then combined.
#pragma once
#include "kernels/cuda/reduce_logic.hpp"

namespace pock::test {

template <typename R>
void host_reduce(const cuda::ReducePlan& p, const R& r, int64_t group) {
  for (int64_t o = 0; o < p.outputs; ++o) {
    float acc = r.init();
    for (int64_t lane = 0; lane < group; ++lane) acc = r.combine(acc, cuda::lane_partial(p, r, o, lane, group));
    r.store(o, acc);
  }
}

}  // namespace pock::test
