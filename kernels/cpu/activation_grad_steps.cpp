#include "kernels/cpu/activation_grad_steps.hpp"

#include <cmath>

#include "kernels/cpu/cpu_util.hpp"
#include "kernels/cpu/thread_pool.hpp"

namespace pock::cpu {
namespace {

constexpr size_t kMinParallelElements = size_t{1} << 15;

}  // namespace

bool activation_grad_accepts(const pock_op_desc& op) {
  if (op.num_inputs != 2 || op.num_outputs != 1) return false;
  const pock_tensor_desc &dy = op.inputs[0], &v = op.inputs[1], &dx = op.outputs[0];
  return is_f32(dy) && is_f32(v) && is_f32(dx) && numel(dy) == numel(v) && numel(dx) == numel(v);
}

Status run_activation_grad(const KernelCall& c, const params::ActivationParams& a, ActivationGradLoop loop) {
  ActivationGradParams p;
  p.alpha = static_cast<float>(a.alpha);
  p.gamma = static_cast<float>(a.gamma);
  p.lo = static_cast<float>(a.lo);
  p.hi = static_cast<float>(a.hi);
  const float* dy = c.in_data<float>(0);
  const float* v = c.in_data<float>(1);
  float* dx = c.out_data<float>(0);
  const size_t n = static_cast<size_t>(numel(c.out(0)));
  pthreadpool_t pool = n >= kMinParallelElements ? thread_pool_for(c.desc->num_threads) : nullptr;
  parallel_for(pool, n, balanced_tile(pool, n, kMinParallelElements / 4), [&](size_t begin, size_t end) {
    loop(dy + begin, v + begin, dx + begin, static_cast<int64_t>(end - begin), p);
  });
  return Status::ok();
}

}  // namespace pock::cpu
