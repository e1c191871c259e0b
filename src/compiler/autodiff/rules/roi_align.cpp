// Reverse-mode rule of the roi_align family: avg RoiAlign is linear in the feature map, so its
// gradient is the transpose of its sampling weights (RoiAlignGrad). The regions and their batch
// indices get none (as in torchvision: proposals are not trained through the pooling).
#include <string>

#include "compiler/autodiff/grad_rule.hpp"

namespace pock {
namespace {

Status roi_align(GradContext& ctx) {
  if (ctx.dy(0) == kNoTensor || !ctx.needs(0)) return Status::ok();
  const std::string mode(ctx.attrs().get_string("mode", "avg"));
  if (mode != "avg") {
    ctx.fail(Status(Code::kUnsupportedOp, "RoiAlign with mode '" + mode + "' has no gradient rule (only avg)"));
    return ctx.status();
  }
  ctx.set_dx(0, ctx.emit1("RoiAlignGrad", {ctx.dy(0), ctx.x(0), ctx.x(1), ctx.x(2)}, ctx.attrs()));
  return ctx.status();
}

}  // namespace

void register_roi_align_gradients(GradRegistry& r) { r.add("RoiAlign", roi_align); }

}  // namespace pock
