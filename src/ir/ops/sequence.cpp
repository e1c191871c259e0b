// Sequence family schemas: embedding lookup (Gather), rotary embedding, causal masking, dropout.
#include <cmath>
#include <string>

#include "ir/ops/schema_helpers.hpp"

namespace pock {
namespace {

Status require_flag(const InferContext& ctx, const char* name) {
  const int64_t v = ctx.attrs->get_int(name, 0);
  if (v != 0 && v != 1) return ctx.error(std::string("attribute '") + name + "' must be 0 or 1");
  return Status::ok();
}

// Dropout ratios live in [0, 1): a ratio of 1 would scale the kept elements by 1 / 0.
Status require_ratio(const InferContext& ctx) {
  const double ratio = ctx.attrs->get_float("ratio", 0.5);
  if (!(ratio >= 0.0 && ratio < 1.0)) return ctx.error("ratio must be in [0, 1), got " + std::to_string(ratio));
  return Status::ok();
}

// Output: data.shape[:axis] + indices.shape + data.shape[axis+1:] (ONNX).
Status gather(InferContext& ctx) {
  const TensorType& data = ctx.in(0);
  const TensorType& indices = ctx.in(1);
  if (indices.dtype != DType::kI32 && indices.dtype != DType::kI64) {
    return ctx.error(std::string("indices must be i32 or i64, got ") + dtype_name(indices.dtype));
  }
  const int rank = static_cast<int>(data.shape.size());
  auto axis = normalize_axis(ctx.attrs->get_int("axis", 0), rank);
  if (!axis.is_ok() || rank == 0) {
    return ctx.error("axis " + std::to_string(ctx.attrs->get_int("axis", 0)) + " out of range for data " +
                     shape_str(data.shape));
  }
  Shape out(data.shape.begin(), data.shape.begin() + axis.value());
  out.insert(out.end(), indices.shape.begin(), indices.shape.end());
  out.insert(out.end(), data.shape.begin() + axis.value() + 1, data.shape.end());
  if (static_cast<int>(out.size()) > kMaxRank) {
    return ctx.shape_error("output rank " + std::to_string(out.size()) + " exceeds the maximum " +
                           std::to_string(kMaxRank));
  }
  ctx.outputs = {TensorType{data.dtype, std::move(out)}};
  return Status::ok();
}

// x [..., S, D]: D holds D/2 rotation pairs.
Status rope(InferContext& ctx) {
  POCK_RETURN_IF_ERROR(schema::require_float(ctx, 0));
  const Shape& x = ctx.in(0).shape;
  if (x.size() < 2) return ctx.shape_error("x must be [..., S, D], got " + shape_str(x));
  if (x.back() % 2 != 0) return ctx.shape_error("head dim D must be even, got " + shape_str(x));
  const double theta = ctx.attrs->get_float("theta", 10000.0);
  if (!(theta > 0.0) || !std::isfinite(theta)) return ctx.error("theta must be positive, got " + std::to_string(theta));
  POCK_RETURN_IF_ERROR(require_flag(ctx, "interleaved"));
  POCK_RETURN_IF_ERROR(require_flag(ctx, "inverse"));
  return schema::same_as_first(ctx);
}

Status causal_mask(InferContext& ctx) {
  POCK_RETURN_IF_ERROR(schema::require_float(ctx, 0));
  if (ctx.in(0).shape.size() < 2) return ctx.shape_error("scores must be [..., S, T], got " + shape_str(ctx.in(0).shape));
  return schema::same_as_first(ctx);
}

Status dropout(InferContext& ctx) {
  POCK_RETURN_IF_ERROR(schema::require_float(ctx, 0));
  POCK_RETURN_IF_ERROR(require_ratio(ctx));
  return schema::same_as_first(ctx);
}

// Outputs y (like x) and the keep mask (u8, 1 = kept, shaped like x).
Status dropout_train(InferContext& ctx) {
  POCK_RETURN_IF_ERROR(schema::require_float(ctx, 0));
  POCK_RETURN_IF_ERROR(require_ratio(ctx));
  const TensorType& step = ctx.in(1);
  if (step.dtype != DType::kI64 || numel(step.shape) != 1) {
    return ctx.error(std::string("step must be an i64 scalar, got ") + dtype_name(step.dtype) + " " +
                     shape_str(step.shape));
  }
  ctx.outputs = {ctx.in(0), TensorType{DType::kU8, ctx.in(0).shape}};
  return Status::ok();
}

}  // namespace

void register_sequence_schemas(SchemaRegistry& r) {
  using schema::add;
  add(r, "Gather", 2, 2, 1, 1, gather, "take slices of data along axis at indices (i32/i64; negative counts from the end)");
  add(r, "Rope", 1, 1, 1, 1, rope,
      "rotary embedding of x [..., S, D] at positions 0..S-1; theta, interleaved (pairs 2i, 2i+1) or rotate-half "
      "(pairs i, i+D/2), inverse rotates by -angle");
  add(r, "CausalMask", 1, 1, 1, 1, causal_mask, "scores[..., i, j] = value (default -inf) where j > i + (T - S)");
  add(r, "Dropout", 1, 1, 1, 1, dropout, "inference dropout: identity");
  add(r, "DropoutTrain", 2, 2, 2, 2, dropout_train,
      "training dropout: y = x * mask / (1 - ratio); mask (u8) from a counter hash of (seed, step, index)");
}

}  // namespace pock
