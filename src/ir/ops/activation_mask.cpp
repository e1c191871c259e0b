// Schemas of the activation_mask family: what the Relu, Relu6 and Clip gradient rules save for the
// backward pass instead of an f32 tensor. Their derivative is 1 inside the linear range and 0
// outside, so one byte per element says all the backward needs: the forward pass writes
// ClipMask (1 byte) and the backward multiplies by it with MaskGrad (see docs/ops.md).
#include "ir/ops/schema_helpers.hpp"

namespace pock {
namespace {

// ClipMask(v) -> u8 mask of v's shape: 1 where min < v < max (inclusive=1: min <= v <= max); an
// absent bound tests nothing, and a NaN is never inside.
Status clip_mask(InferContext& ctx) {
  POCK_RETURN_IF_ERROR(schema::require_float(ctx, 0));
  const int64_t inclusive = ctx.attrs->get_int("inclusive", 0);
  if (inclusive != 0 && inclusive != 1) return ctx.error("inclusive must be 0 or 1, got " + std::to_string(inclusive));
  ctx.outputs = {TensorType{DType::kU8, ctx.in(0).shape}};
  return Status::ok();
}

// MaskGrad(dy, mask) -> dy * mask, dy's type.
Status mask_grad(InferContext& ctx) {
  POCK_RETURN_IF_ERROR(schema::require_float(ctx, 0));
  if (ctx.in(1).dtype != DType::kU8 && ctx.in(1).dtype != DType::kBool) {
    return ctx.error(std::string("mask must be u8 or bool, got ") + dtype_name(ctx.in(1).dtype));
  }
  if (ctx.in(1).shape != ctx.in(0).shape) {
    return ctx.shape_error("mask " + shape_str(ctx.in(1).shape) + " must match dy " + shape_str(ctx.in(0).shape));
  }
  return schema::same_as_first(ctx);
}

}  // namespace

void register_activation_mask_schemas(SchemaRegistry& r) {
  using schema::add;
  add(r, "ClipMask", 1, 1, 1, 1, clip_mask,
      "u8 mask of v: 1 where min < v < max (inclusive=1: min <= v <= max; an absent bound tests nothing; NaN: 0)");
  add(r, "MaskGrad", 2, 2, 1, 1, mask_grad,
      "(dy, mask) -> dy * mask: the gradient of Relu, Relu6, Clip from a ClipMask");
  // Element i of dx is written after dy[i] is read: dx may take dy's buffer.
  r.set_inplace("MaskGrad", 0);
}

}  // namespace pock
