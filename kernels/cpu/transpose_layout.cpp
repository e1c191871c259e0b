// Transpose between NCHW and NHWC (perm 0,2,3,1 and 0,3,1,2) on the cpu backend: the entries and
// exits of the channels-last convolution chains that the compiler's layout pass makes
// (compiler/passes/layout_nhwc.cpp). The same tiled copy as the per-op staging it replaces
// (layout.hpp); any other permutation declines and runs on ref.
#include "kernels/cpu/cpu_families.hpp"
#include "kernels/cpu/cpu_util.hpp"
#include "kernels/cpu/layout.hpp"
#include "kernels/cpu/thread_pool.hpp"

namespace pock::cpu {
namespace {

enum class Direction { kNone, kToNhwc, kToNchw };

Direction direction_of(const pock_op_desc& op) {
  const IntSpan perm = call_of(op).attr_ints("perm");
  if (perm.size != 4) return Direction::kNone;
  if (perm[0] == 0 && perm[1] == 2 && perm[2] == 3 && perm[3] == 1) return Direction::kToNhwc;
  if (perm[0] == 0 && perm[1] == 3 && perm[2] == 1 && perm[3] == 2) return Direction::kToNchw;
  return Direction::kNone;
}

bool transpose_accepts(const pock_op_desc& op) {
  if (op.num_inputs != 1 || op.num_outputs != 1) return false;
  const pock_tensor_desc &x = op.inputs[0], &y = op.outputs[0];
  return x.rank == 4 && y.rank == 4 && is_f32(x) && is_f32(y) && direction_of(op) != Direction::kNone;
}

Status transpose_run(const KernelCall& c) {
  const pock_tensor_desc& x = c.in(0);
  pthreadpool_t pool = thread_pool_for(c.desc->num_threads);
  if (direction_of(*c.desc) == Direction::kToNhwc) {
    nchw_to_nhwc(c.in_data<float>(0), c.out_data<float>(0), x.dims[0], x.dims[1], x.dims[2] * x.dims[3], pool);
  } else {
    nhwc_to_nchw(c.in_data<float>(0), nullptr, c.out_data<float>(0), x.dims[0], x.dims[3], x.dims[1] * x.dims[2], pool);
  }
  return Status::ok();
}

}  // namespace

void register_transpose_layout(KernelTable& t) {
  KernelDef d{"Transpose", DType::kF32, transpose_run, kCpuScore};
  d.accepts = transpose_accepts;
  t.add(d);
}

}  // namespace pock::cpu
