// Conv2d on the cpu backend: picks, per op at prepare, the first way that can run it (see
// conv_kernel.hpp): XNNPACK for a frozen weight, else direct depthwise loops, else im2col + GEMM.
// An op none of them takes (no library for it) declines and runs on ref.
#include <new>

#include "kernels/cpu/conv_kernel.hpp"
#include "kernels/cpu/cpu_families.hpp"
#include "kernels/cpu/cpu_util.hpp"

namespace pock::cpu {
namespace {

bool conv_accepts(const pock_op_desc& op) {
  ConvGeometry g;
  if (!conv_geometry(op, &g)) return false;
  // XNNPACK may still reject a shape at prepare; prepare then reports that no way is left.
  return g.is_depthwise() || im2col_conv_available() || (xnnpack_conv_available() && is_constant(op.inputs[1]));
}

Status conv_prepare(const pock_op_desc& op, KernelScope& scope, void** state) {
  ConvGeometry g;
  if (!conv_geometry(op, &g)) {
    return Status(Code::kInvalidArgument, std::string("Conv2d '") + op.name + "': bad shapes");
  }
  using Maker = std::unique_ptr<ConvKernel> (*)(const pock_op_desc&, const ConvGeometry&, KernelScope&, Status*);
  for (Maker make : {make_xnnpack_conv, make_depthwise_conv, make_im2col_conv}) {
    Status status;
    std::unique_ptr<ConvKernel> kernel = make(op, g, scope, &status);
    POCK_RETURN_IF_ERROR(status);
    if (kernel) {
      *state = kernel.release();
      return Status::ok();
    }
  }
  return Status(Code::kMissingKernel, std::string("Conv2d '") + op.name + "': no cpu convolution takes this shape");
}

Status conv_run(const KernelCall& c) { return static_cast<ConvKernel*>(c.state)->run(c); }

void conv_release(void* state) { delete static_cast<ConvKernel*>(state); }

}  // namespace

void register_conv(KernelTable& t) {
  KernelDef d{"Conv2d", DType::kF32, conv_run, kCpuScore, nullptr, conv_release};
  d.prepare_scoped = conv_prepare;
  d.accepts = conv_accepts;
  t.add(d);
}

}  // namespace pock::cpu
