// indexing family schemas: ONNX's TopK (the k largest or smallest along an axis, with their
// indices), OneHot (indices to one-hot rows) and ReverseSequence (each batch entry's first
// sequence_lens[b] time steps reversed).
#include <string>

#include "ir/ops/schema_helpers.hpp"

namespace pock {
namespace {

bool is_index_dtype(DType t) { return t == DType::kI32 || t == DType::kI64; }

// Output 0: x with `k` entries on `axis`; output 1: their indices (i64).
Status top_k(InferContext& ctx) {
  const TensorType& x = ctx.in(0);
  if (x.dtype != DType::kF32 && !is_index_dtype(x.dtype)) {
    return ctx.error(std::string("x must be f32, i32 or i64, got ") + dtype_name(x.dtype));
  }
  const int64_t attr_axis = ctx.attrs->get_int("axis", -1);
  auto axis = normalize_axis(attr_axis, static_cast<int>(x.shape.size()));
  if (!axis.is_ok() || x.shape.empty()) {
    return ctx.error("axis " + std::to_string(attr_axis) + " out of range for x " + shape_str(x.shape));
  }
  const int64_t k = ctx.attrs->get_int("k", 0);
  const int64_t dim = x.shape[static_cast<size_t>(axis.value())];
  if (k < 1 || k > dim) {
    return ctx.shape_error("k " + std::to_string(k) + " must be in [1, " + std::to_string(dim) + "] (axis " +
                           std::to_string(axis.value()) + " of x " + shape_str(x.shape) + ")");
  }
  Shape out = x.shape;
  out[static_cast<size_t>(axis.value())] = k;
  ctx.outputs = {TensorType{x.dtype, out}, TensorType{DType::kI64, out}};
  return Status::ok();
}

// indices (i32, i64 or f32, whose values are truncated) with an axis of `depth` inserted at `axis`,
// in the dtype of values = [off_value, on_value].
Status one_hot(InferContext& ctx) {
  const TensorType& indices = ctx.in(0);
  const TensorType& values = ctx.in(1);
  if (!is_index_dtype(indices.dtype) && indices.dtype != DType::kF32) {
    return ctx.error(std::string("indices must be i32, i64 or f32, got ") + dtype_name(indices.dtype));
  }
  if (values.shape != Shape{2}) {
    return ctx.shape_error("values must be [off_value, on_value] of shape [2], got " + shape_str(values.shape));
  }
  const int64_t depth = ctx.attrs->get_int("depth", 0);
  if (depth < 1) return ctx.error("depth must be at least 1, got " + std::to_string(depth));
  const int rank = static_cast<int>(indices.shape.size()) + 1;
  const int64_t attr_axis = ctx.attrs->get_int("axis", -1);
  auto axis = normalize_axis(attr_axis, rank);
  if (!axis.is_ok()) return ctx.error("axis " + std::to_string(attr_axis) + " out of range for an output of rank " + std::to_string(rank));
  if (rank > kMaxRank) return ctx.shape_error("the output would have rank " + std::to_string(rank) + ", more than " + std::to_string(kMaxRank));
  Shape out = indices.shape;
  out.insert(out.begin() + axis.value(), depth);
  ctx.outputs = {TensorType{values.dtype, out}};
  return Status::ok();
}

// x of rank >= 2 (batch and time axes 0 and 1, in either order), sequence_lens i32/i64 [batch].
Status reverse_sequence(InferContext& ctx) {
  const TensorType& x = ctx.in(0);
  const TensorType& lens = ctx.in(1);
  const int64_t batch_axis = ctx.attrs->get_int("batch_axis", 1);
  const int64_t time_axis = ctx.attrs->get_int("time_axis", 0);
  if (!((batch_axis == 0 && time_axis == 1) || (batch_axis == 1 && time_axis == 0))) {
    return ctx.error("batch_axis and time_axis must be 0 and 1 in some order, got " + std::to_string(batch_axis) +
                     " and " + std::to_string(time_axis));
  }
  if (x.shape.size() < 2) return ctx.shape_error("x must have rank 2 or more, got " + shape_str(x.shape));
  if (!is_index_dtype(lens.dtype)) return ctx.error(std::string("sequence_lens must be i32 or i64, got ") + dtype_name(lens.dtype));
  if (lens.shape != Shape{x.shape[static_cast<size_t>(batch_axis)]}) {
    return ctx.shape_error("sequence_lens " + shape_str(lens.shape) + " must hold one length per batch entry of x " +
                           shape_str(x.shape));
  }
  return schema::same_as_first(ctx);
}

}  // namespace

void register_indexing_schemas(SchemaRegistry& r) {
  using schema::add;
  add(r, "TopK", 1, 1, 2, 2, top_k,
      "the k largest (largest=1) or smallest entries of x along axis, sorted, and their indices (i64); of equal "
      "values the lower index comes first");
  add(r, "OneHot", 2, 2, 1, 1, one_hot,
      "y has indices' shape with an axis of size depth inserted at axis; y = values[1] where that axis' coordinate "
      "equals the index (negative indices count from depth), values[0] elsewhere");
  add(r, "ReverseSequence", 2, 2, 1, 1, reverse_sequence,
      "x with the first sequence_lens[b] steps along time_axis reversed for each entry b of batch_axis; the rest "
      "copied");
}

}  // namespace pock
