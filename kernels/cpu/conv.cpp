// Conv2d on the cpu backend: picks, per op at prepare, the first way that can run it (see
// conv_kernel.hpp): XNNPACK for a frozen weight, else direct depthwise loops, else im2col + GEMM.
// An op none of them takes (no library for it) declines and runs on ref.
// A channels-last Conv2d (layout "NHWC", set by the compiler's layout pass only where XNNPACK
// runs it) goes to XNNPACK alone, which then needs no staging copies; without XNNPACK or with a
// trainable weight the op declines and runs on ref.
#include <algorithm>
#include <new>

#include "kernels/cpu/conv_kernel.hpp"
#include "kernels/cpu/cpu_families.hpp"
#include "kernels/cpu/cpu_util.hpp"

namespace pock::cpu {
namespace {

bool is_nhwc(const pock_op_desc& op) { return call_of(op).attr_string("layout", "NCHW") == "NHWC"; }

// The geometry in NCHW terms whatever the op's layout: an NHWC x and y are read through copies of
// their descs with the dims permuted (only the dims are read).
bool geometry_of(const pock_op_desc& op, ConvGeometry* g) {
  if (!is_nhwc(op)) return conv_geometry(op, g);
  if (op.num_inputs < 2 || op.num_inputs > 3 || op.num_outputs != 1) return false;
  if (op.inputs[0].rank != 4 || op.outputs[0].rank != 4) return false;
  pock_tensor_desc inputs[3], output = op.outputs[0];
  std::copy(op.inputs, op.inputs + op.num_inputs, inputs);
  for (pock_tensor_desc* t : {&inputs[0], &output}) {
    const int64_t h = t->dims[1], w = t->dims[2], c = t->dims[3];
    t->dims[1] = c;
    t->dims[2] = h;
    t->dims[3] = w;
  }
  pock_op_desc view = op;
  view.inputs = inputs;
  view.outputs = &output;
  return conv_geometry(view, g);
}

bool conv_accepts(const pock_op_desc& op) {
  ConvGeometry g;
  if (!geometry_of(op, &g)) return false;
  if (is_nhwc(op)) return xnnpack_conv_available() && is_constant(op.inputs[1]);
  // XNNPACK may still reject a shape at prepare; prepare then reports that no way is left.
  return g.is_depthwise() || im2col_conv_available() || (xnnpack_conv_available() && is_constant(op.inputs[1]));
}

Status conv_prepare(const pock_op_desc& op, KernelScope& scope, void** state) {
  ConvGeometry g;
  if (!geometry_of(op, &g)) {
    return Status(Code::kInvalidArgument, std::string("Conv2d '") + op.name + "': bad shapes");
  }
  using Maker = std::unique_ptr<ConvKernel> (*)(const pock_op_desc&, const ConvGeometry&, KernelScope&, Status*);
  const bool nhwc = is_nhwc(op);
  for (Maker make : {make_xnnpack_conv, make_depthwise_conv, make_im2col_conv}) {
    if (nhwc && make != make_xnnpack_conv) break;  // the others read NCHW
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
