// Schemas of the sequence family's backward-only ops: the embedding scatter-add and dropout's
// mask. Rope and CausalMask are their own gradients (Rope with inverse=1, CausalMask with 0).
#include <string>

#include "ir/ops/layer_grad_schemas.hpp"
#include "ir/ops/schema_helpers.hpp"

namespace pock {
namespace {

// GatherGrad(dy, indices) -> ddata of `shape`: zeros, then dy rows added at their indices
// (duplicate indices accumulate). dy must be shape[:axis] + indices.shape + shape[axis+1:].
Status gather_grad(InferContext& ctx) {
  POCK_RETURN_IF_ERROR(schema::require_float(ctx, 0));
  if (ctx.in(1).dtype != DType::kI32 && ctx.in(1).dtype != DType::kI64) return ctx.error("indices must be i32 or i64");
  if (!ctx.attrs->has("shape")) return ctx.error("attribute 'shape' (the data shape) is required");
  const Shape shape = ctx.attrs->get_ints("shape", {});
  for (int64_t d : shape) {
    if (d < 0) return ctx.error("attribute 'shape' has a negative dimension");
  }
  auto axis = normalize_axis(ctx.attrs->get_int("axis", 0), static_cast<int>(shape.size()));
  if (!axis.is_ok() || shape.empty()) return ctx.error("axis out of range for data shape " + shape_str(shape));
  const Shape& indices = ctx.in(1).shape;
  Shape expected(shape.begin(), shape.begin() + axis.value());
  expected.insert(expected.end(), indices.begin(), indices.end());
  expected.insert(expected.end(), shape.begin() + axis.value() + 1, shape.end());
  if (ctx.in(0).shape != expected) {
    return ctx.shape_error("dy " + shape_str(ctx.in(0).shape) + " must be " + shape_str(expected));
  }
  ctx.outputs = {TensorType{ctx.in(0).dtype, shape}};
  return Status::ok();
}

// DropoutGrad(dy, mask) -> dy * mask / (1 - ratio); attribute ratio.
Status dropout_grad(InferContext& ctx) {
  POCK_RETURN_IF_ERROR(schema::require_float(ctx, 0));
  if (ctx.in(1).dtype != DType::kU8 && ctx.in(1).dtype != DType::kBool) return ctx.error("mask must be u8 or bool");
  if (ctx.in(1).shape != ctx.in(0).shape) {
    return ctx.shape_error("mask " + shape_str(ctx.in(1).shape) + " must match dy " + shape_str(ctx.in(0).shape));
  }
  const double ratio = ctx.attrs->get_float("ratio", 0.5);
  if (!(ratio >= 0.0 && ratio < 1.0)) return ctx.error("ratio must be in [0, 1), got " + std::to_string(ratio));
  ctx.outputs = {ctx.in(0)};
  return Status::ok();
}

}  // namespace

void register_sequence_grad_schemas(SchemaRegistry& r) {
  using schema::add;
  add(r, "GatherGrad", 2, 2, 1, 1, gather_grad,
      "Gather backward (dy, indices) -> zeros of `shape` plus dy scattered along axis; duplicates accumulate");
  add(r, "DropoutGrad", 2, 2, 1, 1, dropout_grad, "DropoutTrain backward (dy, mask): dy * mask / (1 - ratio)");
}

}  // namespace pock
