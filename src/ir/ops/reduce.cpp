// Schemas of the reduce family: ReduceSum, ReduceMean, ReduceMax over `axes` (empty = all) with
// `keepdims`.
#include <vector>

#include "ir/ops/schema_helpers.hpp"

namespace pock {
namespace {

// Which axes of a rank-`rank` input are reduced; errors name the offending axis.
Result<std::vector<bool>> reduced_axes(const InferContext& ctx, int rank) {
  static const std::vector<int64_t> kAll;
  const std::vector<int64_t>& axes = ctx.attrs->get_ints("axes", kAll);
  std::vector<bool> reduced(static_cast<size_t>(rank), axes.empty());
  if (!axes.empty() && rank == 0) return ctx.error("a scalar has no axes to reduce, got axes of size " + std::to_string(axes.size()));
  for (int64_t axis : axes) {
    auto a = normalize_axis(axis, rank);
    if (!a.is_ok()) return ctx.error(a.status().message());
    if (reduced[static_cast<size_t>(a.value())]) return ctx.error("axis " + std::to_string(axis) + " is listed twice");
    reduced[static_cast<size_t>(a.value())] = true;
  }
  return reduced;
}

Status reduce(InferContext& ctx) {
  POCK_RETURN_IF_ERROR(schema::require_float(ctx, 0));
  const int64_t keepdims = ctx.attrs->get_int("keepdims", 1);
  if (keepdims != 0 && keepdims != 1) return ctx.error("keepdims must be 0 or 1, got " + std::to_string(keepdims));
  const Shape& x = ctx.in(0).shape;
  POCK_ASSIGN_OR_RETURN(std::vector<bool> reduced, reduced_axes(ctx, static_cast<int>(x.size())));
  Shape out;
  int64_t reduced_count = 1;
  for (size_t d = 0; d < x.size(); ++d) {
    if (reduced[d]) {
      reduced_count *= x[d];
      if (keepdims) out.push_back(1);
    } else {
      out.push_back(x[d]);
    }
  }
  // Sum over nothing is 0; mean and max over nothing have no value.
  if (reduced_count == 0 && ctx.op != "ReduceSum") {
    return ctx.shape_error("reduces over zero elements of " + shape_str(x) + ", which has no " +
                           (ctx.op == "ReduceMax" ? "maximum" : "mean"));
  }
  ctx.outputs = {TensorType{ctx.in(0).dtype, out}};
  return Status::ok();
}

}  // namespace

void register_reduce_schemas(SchemaRegistry& r) {
  using schema::add;
  add(r, "ReduceSum", 1, 1, 1, 1, reduce, "sum over axes (empty = all), keepdims=1");
  add(r, "ReduceMean", 1, 1, 1, 1, reduce, "mean over axes (empty = all), keepdims=1");
  add(r, "ReduceMax", 1, 1, 1, 1, reduce, "max over axes (empty = all), keepdims=1");
}

}  // namespace pock
