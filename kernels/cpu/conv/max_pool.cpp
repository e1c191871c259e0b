// MaxPool2d on the cpu backend (the kernel: pool_kernels.cpp).
#include "kernels/cpu/cpu_families.hpp"
#include "kernels/cpu/cpu_util.hpp"
#include "kernels/cpu/pool_kernels.hpp"

namespace pock::cpu {

void register_max_pool(KernelTable& t) {
  t.add(typed_kernel<params::WindowParams, max_pool>("MaxPool2d", DType::kF32, kCpuScore, max_pool_accepts));
}

}  // namespace pock::cpu
