#include "kernels/cuda/all_finite.hpp"

#include <cstdint>

#include "kernels/cuda/launch.cuh"

namespace pock::cuda {
namespace {

// Exponent all ones: Inf or NaN, in any IEEE-like format. Bit tests need no conversion, and
// nothing here depends on the device's floating-point modes.
template <typename Bits, Bits kExponent>
struct NonFinite {
  const Bits* data;
  int32_t* flag;
  int32_t mark;
  __device__ void operator()(int64_t i) const {
    if ((data[i] & kExponent) == kExponent) *flag = mark;
  }
};

}  // namespace

cudaError_t launch_find_non_finite(const void* data, size_t nbytes, pock_dtype dtype, int32_t* flag, int32_t mark,
                                   cudaStream_t stream) {
  switch (dtype) {
    case POCK_F32:
      return launch_map(static_cast<int64_t>(nbytes / 4), stream,
                        NonFinite<uint32_t, 0x7f800000u>{static_cast<const uint32_t*>(data), flag, mark});
    case POCK_F16:
      return launch_map(static_cast<int64_t>(nbytes / 2), stream,
                        NonFinite<uint16_t, 0x7c00u>{static_cast<const uint16_t*>(data), flag, mark});
    case POCK_BF16:
      return launch_map(static_cast<int64_t>(nbytes / 2), stream,
                        NonFinite<uint16_t, 0x7f80u>{static_cast<const uint16_t*>(data), flag, mark});
    default:
      return cudaSuccess;  // integers are always finite
  }
}

}  // namespace pock::cuda
