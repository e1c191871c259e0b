// Index arithmetic of the device functors. A 64-bit division is a software routine on the GPU
// (tens of instructions); the indices of almost every tensor fit 31 bits, where the hardware's
// 32-bit path is several times cheaper. The branch is the same for every thread of a launch.
#pragma once
#include <cstdint>

#include "kernels/cuda/hd.hpp"

namespace pock::cuda {

// a / b for a >= 0, b >= 1.
POCK_HD int64_t index_div(int64_t a, int64_t b) {
  if (((a | b) >> 31) == 0) return static_cast<int64_t>(static_cast<uint32_t>(a) / static_cast<uint32_t>(b));
  return a / b;
}

POCK_HD int64_t index_mod(int64_t a, int64_t b) { return a - index_div(a, b) * b; }

}  // namespace pock::cuda
