// Reverse-mode rule of the roi_align family: avg RoiAlign is linear in the feature map, so its
// gradient is the transpose of its sampling weights; max passes each bin's gradient to the corner
// that won it, times that corner's weight (RoiAlignGrad does both, by mode). The regions and their
// batch indices get none (as in torchvision: proposals are not trained through the pooling).
#include "compiler/autodiff/grad_rule.hpp"

namespace pock {
namespace {

Status roi_align(GradContext& ctx) {
  if (ctx.dy(0) == kNoTensor || !ctx.needs(0)) return Status::ok();
  ctx.set_dx(0, ctx.emit1("RoiAlignGrad", {ctx.dy(0), ctx.x(0), ctx.x(1), ctx.x(2)}, ctx.attrs()));
  return ctx.status();
}

}  // namespace

void register_roi_align_gradients(GradRegistry& r) { r.add("RoiAlign", roi_align); }

}  // namespace pock
