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

// A position input: an i64 scalar (shape [] or [1]).
Status require_position(const InferContext& ctx, size_t i) {
  const TensorType& p = ctx.in(i);
  if (p.dtype != DType::kI64 || numel(p.shape) != 1) {
    return ctx.error(std::string("position must be an i64 scalar, got ") + dtype_name(p.dtype) + " " + shape_str(p.shape));
  }
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
  if (ctx.has_in(1)) POCK_RETURN_IF_ERROR(require_position(ctx, 1));
  return schema::same_as_first(ctx);
}

// q [B, H, S, D]; k, v [B, KV, S, D]; caches [B, KV, T, D] (H a multiple of KV); position.
Status cached_attention(InferContext& ctx) {
  POCK_RETURN_IF_ERROR(schema::require_float(ctx, 0));
  for (size_t i = 1; i < 5; ++i) {
    if (ctx.in(i).dtype != ctx.in(0).dtype) return ctx.error("input " + std::to_string(i) + " must have q's dtype");
  }
  const Shape& q = ctx.in(0).shape;
  if (q.size() != 4) return ctx.shape_error("q must be [B, H, S, D], got " + shape_str(q));
  const Shape& k = ctx.in(1).shape;
  if (k.size() != 4 || k[0] != q[0] || k[2] != q[2] || k[3] != q[3] || k[1] < 1 || q[1] % k[1] != 0) {
    return ctx.shape_error("k must be [B, KV, S, D] with KV dividing the " + std::to_string(q[1]) + " query heads of q " +
                           shape_str(q) + ", got " + shape_str(k));
  }
  if (ctx.in(2).shape != k) return ctx.shape_error("v must have k's shape " + shape_str(k) + ", got " + shape_str(ctx.in(2).shape));
  const Shape& cache = ctx.in(3).shape;
  if (cache.size() != 4 || cache[0] != k[0] || cache[1] != k[1] || cache[3] != k[3] || cache[2] < k[2]) {
    return ctx.shape_error("the key cache must be [B, KV, T, D] with T >= S for k " + shape_str(k) + ", got " + shape_str(cache));
  }
  if (ctx.in(4).shape != cache) return ctx.shape_error("the value cache must have the key cache's shape " + shape_str(cache));
  POCK_RETURN_IF_ERROR(require_position(ctx, 5));
  const double scale = ctx.attrs->get_float("scale", 1.0);
  if (!std::isfinite(scale)) return ctx.error("scale must be finite");
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
  add(r, "Rope", 1, 2, 1, 1, rope,
      "rotary embedding of x [..., S, D] at positions p..p+S-1 (p: the optional i64 position input, else 0); theta, "
      "interleaved (pairs 2i, 2i+1) or rotate-half (pairs i, i+D/2), inverse rotates by -angle");
  add(r, "CachedAttention", 6, 6, 1, 1, cached_attention,
      "decode-step attention: writes k, v [B, KV, S, D] into the caches [B, KV, T, D] at rows p..p+S-1 (p: position), "
      "then softmax(scale q K^T) V for q [B, H, S, D] over cache rows 0..p+s (causal), query head h reading KV head "
      "h / (H / KV)",
      {3, 4});
  add(r, "CausalMask", 1, 1, 1, 1, causal_mask, "scores[..., i, j] = value (default -inf) where j > i + (T - S)");
  add(r, "Dropout", 1, 1, 1, 1, dropout, "inference dropout: identity");
  add(r, "DropoutTrain", 2, 2, 2, 2, dropout_train,
      "training dropout: y = x * mask / (1 - ratio); mask (u8) from a counter hash of (seed, step, index)");
}

}  // namespace pock
