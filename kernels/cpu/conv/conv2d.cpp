// Conv2d on the cpu backend: picks, per op at prepare, the first way that can run it (see
// conv_kernel.hpp) from an order that depends on the shape (ways_for below). An op none of them
// takes (no library for it) declines and runs on ref.
// A channels-last Conv2d (layout "NHWC", set by the compiler's layout pass on chains of frozen
// convolutions) needs no staging copies: a 1x1 one is one sgemm over the batch, or register
// tiles for a short reduction (conv_pointwise_nhwc.cpp); any other goes to XNNPACK, and without
// XNNPACK, or with a trainable weight, declines and runs on ref.
#include <algorithm>
#include <new>
#include <vector>

#include "kernels/cpu/conv_algorithm_choice.hpp"
#include "kernels/cpu/conv_bf16.hpp"
#include "kernels/cpu/conv_dnnl.hpp"
#include "kernels/cpu/conv_kernel.hpp"
#include "kernels/cpu/conv_pointwise.hpp"
#include "kernels/cpu/conv_pointwise_nhwc.hpp"
#include "kernels/cpu/conv_winograd.hpp"
#include "kernels/cpu/cpu_families.hpp"
#include "kernels/cpu/cpu_util.hpp"
#include "kernels/cpu/depthwise_vector_rows.hpp"
#include "kernels/params/conv.hpp"

namespace pock::cpu {
namespace {

bool is_nhwc(const pock_op_desc& op) {
  params::WindowParams p;
  return params::parse(op, &p).is_ok() && p.nhwc;
}

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

using Maker = std::unique_ptr<ConvKernel> (*)(const pock_op_desc&, const ConvGeometry&, KernelScope&, Status*);

// The ways to try, fastest first, for an NCHW op that oneDNN's rule declines.
// XNNPACK takes only a frozen weight and then costs two staging transposes (layout.cpp); the
// orders below are what measured faster with those included (one core of an AVX-512 Xeon, batch
// 8, MobileNetV2 and ResNet-18 at 128x128 — the benchmarks of issue #6):
//   1x1, stride 1, unpadded, one group: im2col's pointwise path is one sgemm on the planes with no
//     unfolding and no staging. 16->96 channels at 64x64: 1.8 ms against 3.2 ms through XNNPACK;
//     MobileNetV2's sparse step went from 134.6 to 116.4 ms (Conv2d 57 -> 36 ms). Reducing over at
//     most 64 channels (kShortProductMaxDepth) on planes of a tile or more, the backend's own register
//     tiles go first (conv_pointwise.cpp: no output read-back, bias and activation fused). On one
//     core of an AVX2 AMD EPYC (pockc tune, batch 8): 16->96 at 64x64 2.14 -> 1.84 ms, 24->144 at
//     32x32 1.00 -> 0.86 ms; on two, 1.54 -> 0.89 and 0.80 -> 0.43 ms. Deeper reductions keep
//     sgemm, which AVX-512 runs twice as wide; on that AVX2 CPU the tiles won there too (576->96 at
//     8x8: 0.73 -> 0.62 ms), which `pockc tune` finds per machine.
//   depthwise 3x3 on rows of at least 32 columns, or 3x3 and 5x5 windows the vector planes take
//     (rows of 8 or more output columns, PyTorch's or TensorFlow's padding): the direct loops
//     (conv_depthwise.cpp; the latter whole planes in vectors, depthwise_vector_rows.hpp).
//     EfficientNet-Lite0's frozen 5x5 layers at 224 pixels: 240 at 28x28 2.8 against XNNPACK's
//     6.8-7.3 ms, 672 at 14x14 2.3 against 4.5-4.7 ms, 144 at 56x56 stride 2 2.5 against 6.9-8.5. 96 channels at 64x64 stride 2: 0.9 ms against 2.3 ms; 144 at
//     32x32 stride 1: 0.8 against 1.5 ms. With the vector planes (one core of an AVX2 AMD EPYC,
//     pockc tune, batch 8): 384 at 8x8 0.11 against XNNPACK's 0.18 ms, 576 at 8x8 0.16 against
//     0.34 ms, 192 at 16x16 stride 2 0.08 against 0.19 ms; at 224 pixels (frozen weights) 192 at
//     28x28 0.48 against 1.81 ms, 576 at 14x14 0.47 against 1.15 ms, 192 at 28x28 stride 2 0.25
//     against 0.67 ms. On other small planes XNNPACK stays ahead (960 at 4x4: 0.10 against
//     0.43 ms): the row loops are too short there.
//   dense, one thread, a deep window (C*kh*kw >= 2048) on a small output (<= 64 pixels): im2col,
//     whose sgemm then beats XNNPACK by 10-15 % (ResNet-18's 256 channels at 8x8: 5.0 against
//     5.8 ms; 512 at 4x4: 7.6 against 8.5 ms). On two threads XNNPACK wins these too (3.8 against
//     6.1 ms, 4.6 against 7.4 ms): OpenBLAS splits such small products badly.
//   depthwise onto planes of 64 pixels or less with a trained weight (XNNPACK takes only a frozen
//     one): channels-last in scratch (conv_depthwise_nhwc.cpp). MobileNetV2's trained 4x4 layers
//     (960 channels, batch 8), measured on one core of an AVX2 AMD EPYC instead (per-op minimum of
//     6-10 `pockc bench --per-op` runs of the sparse step): 0.64-0.67 ms through the NCHW row
//     loops, 0.14-0.16 ms channels-last.
//   anything else: XNNPACK, then the direct depthwise loops, then im2col. Dense convolutions
//     through XNNPACK beat im2col + sgemm on ResNet-18's other layers (64 channels at 32x32: 4.4
//     against 8.8 ms; 128 at 16x16: 4.1 against 5.7 ms) and its 7x7 stem (6.6 against 8.6 ms).
std::vector<Maker> other_ways_for(const ConvGeometry& g, int32_t num_threads) {
  if (pointwise_preferred(g, ConvDirection::kForward)) return {make_pointwise_conv, make_im2col_conv, make_xnnpack_conv};
  if (is_pointwise(g)) return {make_im2col_conv, make_xnnpack_conv};
  if (g.is_depthwise() && (depthwise_vector_rows_take(g) || (g.kernel_h == 3 && g.kernel_w == 3 && g.in_w >= 32))) {
    return {make_depthwise_conv, make_xnnpack_conv, make_im2col_conv};
  }
  if (num_threads == 1 && g.groups == 1 && g.in_channels * g.kernel_h * g.kernel_w >= 2048 && g.out_plane() <= 64) {
    return {make_im2col_conv, make_xnnpack_conv};
  }
  return {make_xnnpack_conv, make_channels_last_depthwise_conv, make_depthwise_conv, make_im2col_conv};
}

std::unique_ptr<ConvKernel> make_dnnl_forward_by_rule(const pock_op_desc& op, const ConvGeometry& g,
                                                      KernelScope& scope, Status* status) {
  return make_dnnl_conv_by_rule(op, g, ConvDirection::kForward, scope, status);
}

std::unique_ptr<ConvKernel> make_winograd_forward_by_rule(const pock_op_desc& op, const ConvGeometry& g,
                                                          KernelScope& scope, Status* status) {
  return make_winograd_conv_by_rule(op, g, ConvDirection::kForward, scope, status);
}

// oneDNN first (Winograd or direct, conv_dnnl.cpp; off by default, it then declines every op),
// then the backend's own Winograd (conv_winograd.cpp): each rule declines every shape it was not
// measured faster on, which then goes the ways above.
std::vector<Maker> ways_for(const ConvGeometry& g, bool nhwc, int32_t num_threads) {
  if (nhwc) {
    if (pointwise_nhwc_preferred(g)) return {make_pointwise_nhwc_conv, make_short_nhwc_conv, make_xnnpack_conv};
    if (pointwise_nhwc_takes(g)) return {make_short_nhwc_conv, make_xnnpack_conv, make_pointwise_nhwc_conv};
    return {make_xnnpack_conv};
  }
  std::vector<Maker> ways = other_ways_for(g, num_threads);
  ways.insert(ways.begin(), {make_dnnl_forward_by_rule, make_winograd_forward_by_rule});
  return ways;
}

bool conv_accepts(const pock_op_desc& op) {
  ConvGeometry g;
  if (!geometry_of(op, &g)) return false;
  if (g.bf16) return !is_nhwc(op) && bf16_conv_accepts(g);  // compute "bf16": conv_bf16.hpp's way alone
  if (is_nhwc(op)) return pointwise_nhwc_can_run(g) || (xnnpack_conv_available() && is_constant(op.inputs[1]));
  // XNNPACK may still reject a shape at prepare; prepare then reports that no way is left.
  return g.is_depthwise() || im2col_conv_available() || (xnnpack_conv_available() && is_constant(op.inputs[1]));
}

Status conv_prepare(const pock_op_desc& op, KernelScope& scope, void** state) {
  ConvGeometry g;
  if (!geometry_of(op, &g)) {
    return Status(Code::kInvalidArgument, std::string("Conv2d '") + op.name + "': bad shapes");
  }
  // bf16 convolutions have one way; a blob tuned on this machine names the algorithm of the others
  // (pockc tune, compile --profile).
  if (!g.bf16 && names_conv_algorithm(op)) return prepare_chosen_conv(op, g, ConvDirection::kForward, scope, state);
  const std::vector<Maker> ways =
      g.bf16 ? std::vector<Maker>{make_bf16_conv} : ways_for(g, is_nhwc(op), op.num_threads);
  for (Maker make : ways) {
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
