// gather_scatter family schemas: ONNX's GatherElements and ScatterElements, which index one
// element (not one slice, as Gather does) per entry of `indices` along `axis`.
#include <algorithm>
#include <string>

#include "ir/ops/schema_helpers.hpp"
#include "kernels/params/gather_scatter.hpp"

namespace pock {
namespace {

// data and indices share a rank; indices (i32/i64) is no larger than data off the axis, so every
// entry names an element of data. Returns the axis, normalized.
Result<int> check_indices(const InferContext& ctx, const TensorType& data, const TensorType& indices) {
  if (indices.dtype != DType::kI32 && indices.dtype != DType::kI64) {
    return ctx.error(std::string("indices must be i32 or i64, got ") + dtype_name(indices.dtype));
  }
  const int rank = static_cast<int>(data.shape.size());
  const int64_t attr_axis = ctx.attrs->get_int("axis", 0);
  auto axis = normalize_axis(attr_axis, rank);
  if (!axis.is_ok() || rank == 0) {
    return ctx.error("axis " + std::to_string(attr_axis) + " out of range for data " + shape_str(data.shape));
  }
  if (indices.shape.size() != data.shape.size()) {
    return ctx.shape_error("indices " + shape_str(indices.shape) + " must have the rank of data " + shape_str(data.shape));
  }
  for (int d = 0; d < rank; ++d) {
    if (d != axis.value() && indices.shape[d] > data.shape[d]) {
      return ctx.shape_error("indices " + shape_str(indices.shape) + " exceed data " + shape_str(data.shape) +
                             " on axis " + std::to_string(d));
    }
  }
  return axis.value();
}

// reduction names one of ScatterReduction's; arithmetic ones need f32, i32 or i64 data.
Status check_reduction(const InferContext& ctx, DType dtype) {
  const std::string reduction(ctx.attrs->get_string("reduction", "none"));
  params::ScatterReduction kind;
  if (!params::scatter_reduction_from_name(reduction, &kind)) {
    return ctx.error("reduction must be none, add, mul, max or min, got '" + reduction + "'");
  }
  const bool arithmetic = kind != params::ScatterReduction::kNone;
  if (arithmetic && dtype != DType::kF32 && dtype != DType::kI32 && dtype != DType::kI64) {
    return ctx.error("reduction '" + reduction + "' needs f32, i32 or i64 data, got " + dtype_name(dtype));
  }
  return Status::ok();
}

// Output: indices' shape, data's dtype.
Status gather_elements(InferContext& ctx) {
  const TensorType& data = ctx.in(0);
  POCK_RETURN_IF_ERROR(check_indices(ctx, data, ctx.in(1)).status());
  ctx.outputs = {TensorType{data.dtype, ctx.in(1).shape}};
  return Status::ok();
}

// Output: data with the updates written (or combined by `reduction`) at the indexed positions.
Status scatter_elements(InferContext& ctx) {
  const TensorType& data = ctx.in(0);
  POCK_RETURN_IF_ERROR(check_indices(ctx, data, ctx.in(1)).status());
  const TensorType& updates = ctx.in(2);
  if (updates.dtype != data.dtype) {
    return ctx.error(std::string("updates must have data's dtype ") + dtype_name(data.dtype) + ", got " +
                     dtype_name(updates.dtype));
  }
  if (updates.shape != ctx.in(1).shape) {
    return ctx.shape_error("updates " + shape_str(updates.shape) + " must have the shape of indices " +
                           shape_str(ctx.in(1).shape));
  }
  POCK_RETURN_IF_ERROR(check_reduction(ctx, data.dtype));
  return schema::same_as_first(ctx);
}

// indices [..., k] (i32/i64) address slices data[i_0, ..., i_{k-1}] after `batch_dims` leading axes
// that data and indices share. Returns k.
Result<int64_t> check_nd_indices(const InferContext& ctx, const Shape& data, const TensorType& indices, int64_t batch) {
  if (indices.dtype != DType::kI32 && indices.dtype != DType::kI64) {
    return ctx.error(std::string("indices must be i32 or i64, got ") + dtype_name(indices.dtype));
  }
  const int64_t r = static_cast<int64_t>(data.size()), q = static_cast<int64_t>(indices.shape.size());
  if (batch < 0 || batch >= std::min(r, q)) {
    return ctx.error("batch_dims " + std::to_string(batch) + " must be in [0, min(rank(data), rank(indices)))");
  }
  const int64_t k = indices.shape.back();
  if (k < 1 || k > r - batch) {
    return ctx.shape_error("the last axis of indices " + shape_str(indices.shape) + " must be in [1, " +
                           std::to_string(r - batch) + "] for data " + shape_str(data));
  }
  for (int64_t d = 0; d < batch; ++d) {
    if (indices.shape[d] != data[d]) {
      return ctx.shape_error("indices " + shape_str(indices.shape) + " and data " + shape_str(data) +
                             " differ on batch axis " + std::to_string(d));
    }
  }
  return k;
}

// Output: indices.shape[:-1] + data.shape[batch_dims + k:].
Status gather_nd(InferContext& ctx) {
  const TensorType& data = ctx.in(0);
  const Shape& idx = ctx.in(1).shape;
  const int64_t batch = ctx.attrs->get_int("batch_dims", 0);
  POCK_ASSIGN_OR_RETURN(int64_t k, check_nd_indices(ctx, data.shape, ctx.in(1), batch));
  Shape out(idx.begin(), idx.end() - 1);
  out.insert(out.end(), data.shape.begin() + batch + k, data.shape.end());
  ctx.outputs = {TensorType{data.dtype, std::move(out)}};
  return Status::ok();
}

// updates: indices.shape[:-1] + data.shape[batch_dims + k:]; output: data's type. batch_dims is
// not ONNX's (its ScatterND has none): GatherND's gradient scatters with GatherND's batch_dims.
Status scatter_nd(InferContext& ctx) {
  const TensorType& data = ctx.in(0);
  const Shape& idx = ctx.in(1).shape;
  const int64_t batch = ctx.attrs->get_int("batch_dims", 0);
  POCK_ASSIGN_OR_RETURN(int64_t k, check_nd_indices(ctx, data.shape, ctx.in(1), batch));
  Shape want(idx.begin(), idx.end() - 1);
  want.insert(want.end(), data.shape.begin() + batch + k, data.shape.end());
  if (ctx.in(2).dtype != data.dtype || ctx.in(2).shape != want) {
    return ctx.shape_error("updates must be " + std::string(dtype_name(data.dtype)) + " " + shape_str(want) + ", got " +
                           dtype_name(ctx.in(2).dtype) + " " + shape_str(ctx.in(2).shape));
  }
  POCK_RETURN_IF_ERROR(check_reduction(ctx, data.dtype));
  return schema::same_as_first(ctx);
}

// (dy, data, indices, updates) -> (d data, d updates) of a ScatterND with reduction mul, max or min,
// whose gradients depend on the values each position met; f32 only (gradients).
Status scatter_nd_grad(InferContext& ctx) {
  const TensorType& data = ctx.in(1);
  if (data.dtype != DType::kF32 || ctx.in(0).dtype != DType::kF32 || ctx.in(0).shape != data.shape) {
    return ctx.shape_error("dy must be f32 " + shape_str(data.shape) + " like data, got " + dtype_name(ctx.in(0).dtype) +
                           " " + shape_str(ctx.in(0).shape));
  }
  const int64_t batch = ctx.attrs->get_int("batch_dims", 0);
  const Shape& idx = ctx.in(2).shape;
  POCK_ASSIGN_OR_RETURN(int64_t k, check_nd_indices(ctx, data.shape, ctx.in(2), batch));
  Shape want(idx.begin(), idx.end() - 1);
  want.insert(want.end(), data.shape.begin() + batch + k, data.shape.end());
  if (ctx.in(3).dtype != DType::kF32 || ctx.in(3).shape != want) {
    return ctx.shape_error("updates must be f32 " + shape_str(want) + ", got " + dtype_name(ctx.in(3).dtype) + " " +
                           shape_str(ctx.in(3).shape));
  }
  const std::string reduction(ctx.attrs->get_string("reduction", "none"));
  if (reduction != "mul" && reduction != "max" && reduction != "min") {
    return ctx.error("reduction must be mul, max or min (none and add need no values), got '" + reduction + "'");
  }
  ctx.outputs = {data, ctx.in(3)};
  return Status::ok();
}

}  // namespace

void register_gather_scatter_schemas(SchemaRegistry& r) {
  using schema::add;
  add(r, "GatherElements", 2, 2, 1, 1, gather_elements,
      "y[i][j][k] = data[indices[i][j][k]][j][k] for axis 0 (likewise on any axis); indices i32/i64, negative "
      "counts from the end; y has indices' shape");
  add(r, "ScatterElements", 3, 3, 1, 1, scatter_elements,
      "y = data, then y[indices[i][j][k]][j][k] = updates[i][j][k] for axis 0 (likewise on any axis), or combined "
      "with the value there by reduction add / mul / max / min; with none, the last of repeated indices wins");
  add(r, "GatherND", 2, 2, 1, 1, gather_nd,
      "y[b..., i...] = data[b..., indices[b..., i..., :]] (the slices the last axis of indices addresses, after "
      "batch_dims shared leading axes)");
  add(r, "ScatterND", 3, 3, 1, 1, scatter_nd,
      "y = data, then y[indices[i..., :]] = updates[i...] (a slice each), or combined by reduction add / mul / max / "
      "min; entries apply in order. batch_dims (pock's, for GatherND's gradient): leading axes data and indices share");
  add(r, "ScatterNDGrad", 4, 4, 2, 2, scatter_nd_grad,
      "backward of ScatterND with reduction mul / max / min: (dy, data, indices, updates) -> (d data, d updates); "
      "mul: dy times the product of every other factor at the position; max / min: dy to the first value that won");
}

}  // namespace pock
