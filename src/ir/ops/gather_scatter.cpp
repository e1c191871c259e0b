// gather_scatter family schemas: ONNX's GatherElements and ScatterElements, which index one
// element (not one slice, as Gather does) per entry of `indices` along `axis`.
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
  const std::string reduction(ctx.attrs->get_string("reduction", "none"));
  params::ScatterReduction kind;
  if (!params::scatter_reduction_from_name(reduction, &kind)) {
    return ctx.error("reduction must be none, add, mul, max or min, got '" + reduction + "'");
  }
  const bool arithmetic = kind != params::ScatterReduction::kNone;
  if (arithmetic && data.dtype != DType::kF32 && data.dtype != DType::kI32 && data.dtype != DType::kI64) {
    return ctx.error("reduction '" + reduction + "' needs f32, i32 or i64 data, got " + dtype_name(data.dtype));
  }
  return schema::same_as_first(ctx);
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
}

}  // namespace pock
