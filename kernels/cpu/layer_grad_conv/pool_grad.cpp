// MaxPool2dGrad and AvgPool2dGrad on the cpu backend (the kernels: pool_kernels.cpp).
#include "kernels/cpu/cpu_families.hpp"
#include "kernels/cpu/cpu_util.hpp"
#include "kernels/cpu/pool_kernels.hpp"

namespace pock::cpu {

void register_pool_grad(KernelTable& t) {
  using P = params::WindowParams;
  t.add(typed_kernel<P, max_pool_grad>("MaxPool2dGrad", DType::kF32, kCpuScore, max_pool_grad_accepts));
  t.add(typed_kernel<P, avg_pool_grad>("AvgPool2dGrad", DType::kF32, kCpuScore, avg_pool_grad_accepts));
}

}  // namespace pock::cpu
