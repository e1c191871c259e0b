// Launches a FloatMap (float_map.hpp) over a kernel's output: four elements a thread with 16-byte
// loads when the operands allow it, one a thread otherwise.
#pragma once
#include "kernels/cuda/float_map.hpp"
#include "kernels/cuda/kernel_launch.cuh"
#include "kernels/cuda/launch.cuh"

namespace pock::cuda {

// Inputs 0..N-1 are the map's operands, output 0 its result.
template <typename Op, int N, typename Args>
Status run_float_map(const KernelCall& c, const StridedIndex<N>& index, const Args& args) {
  const FloatMap<Op, Args, N> map = float_map<Op, N>(*c.desc, index, args);
  const int64_t n = numel(c.out(0));
  if (packable(map)) {
    return launched(c, launch_map(n / 4 + n % 4, current_stream(), FloatPackMap<Op, Args, N>{map, n / 4}));
  }
  return launched(c, launch_map(n, current_stream(), map));
}

}  // namespace pock::cuda
