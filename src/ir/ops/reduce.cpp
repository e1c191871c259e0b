// Schemas of the reduce family: ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceProd,
// ReduceSumSquare, ReduceL1, ReduceL2, ReduceLogSum, ReduceLogSumExp over `axes` (empty = all)
// with `keepdims`, as ONNX defines them; ArgMax and ArgMin (i64 indices along one `axis`).
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
  // A sum over nothing is 0 (so L1/L2 0, LogSum -inf), a product 1; mean, max and min have no value.
  const bool has_empty_value = ctx.op != "ReduceMean" && ctx.op != "ReduceMax" && ctx.op != "ReduceMin";
  if (reduced_count == 0 && !has_empty_value) {
    return ctx.shape_error("reduces over zero elements of " + shape_str(x) + ", which has no " +
                           (ctx.op == "ReduceMax" ? "maximum" : ctx.op == "ReduceMin" ? "minimum" : "mean"));
  }
  ctx.outputs = {TensorType{ctx.in(0).dtype, out}};
  return Status::ok();
}

// ArgMax / ArgMin: i64 indices of the extremum along `axis`, which is dropped or kept as 1.
Status arg_extremum(InferContext& ctx) {
  POCK_RETURN_IF_ERROR(schema::require_float(ctx, 0));
  const int64_t keepdims = ctx.attrs->get_int("keepdims", 1);
  if (keepdims != 0 && keepdims != 1) return ctx.error("keepdims must be 0 or 1, got " + std::to_string(keepdims));
  const int64_t last = ctx.attrs->get_int("select_last_index", 0);
  if (last != 0 && last != 1) return ctx.error("select_last_index must be 0 or 1, got " + std::to_string(last));
  const Shape& x = ctx.in(0).shape;
  auto axis = normalize_axis(ctx.attrs->get_int("axis", 0), static_cast<int>(x.size()));
  if (!axis.is_ok()) return ctx.error(axis.status().message());
  const size_t a = static_cast<size_t>(axis.value());
  if (x[a] == 0) return ctx.shape_error("axis " + std::to_string(a) + " of " + shape_str(x) + " is empty: there is no index to return");
  Shape out = x;
  if (keepdims) out[a] = 1;
  else out.erase(out.begin() + static_cast<std::ptrdiff_t>(a));
  ctx.outputs = {TensorType{DType::kI64, out}};
  return Status::ok();
}

}  // namespace

void register_reduce_schemas(SchemaRegistry& r) {
  using schema::add;
  add(r, "ReduceSum", 1, 1, 1, 1, reduce, "sum over axes (empty = all), keepdims=1");
  add(r, "ReduceMean", 1, 1, 1, 1, reduce, "mean over axes (empty = all), keepdims=1");
  add(r, "ReduceMax", 1, 1, 1, 1, reduce, "max over axes (empty = all), keepdims=1");
  add(r, "ReduceMin", 1, 1, 1, 1, reduce, "min over axes (empty = all), keepdims=1");
  add(r, "ReduceProd", 1, 1, 1, 1, reduce, "product over axes (empty = all), keepdims=1");
  add(r, "ReduceSumSquare", 1, 1, 1, 1, reduce, "sum of x^2 over axes (empty = all), keepdims=1");
  add(r, "ReduceL1", 1, 1, 1, 1, reduce, "sum of |x| over axes (empty = all), keepdims=1");
  add(r, "ReduceL2", 1, 1, 1, 1, reduce, "sqrt of the sum of x^2 over axes (empty = all), keepdims=1");
  add(r, "ReduceLogSum", 1, 1, 1, 1, reduce, "log of the sum over axes (empty = all), keepdims=1");
  add(r, "ReduceLogSumExp", 1, 1, 1, 1, reduce, "log of the sum of exp(x) over axes, computed stably, keepdims=1");
  add(r, "ArgMax", 1, 1, 1, 1, arg_extremum, "i64 index of the max along axis (0), keepdims=1, select_last_index=0");
  add(r, "ArgMin", 1, 1, 1, 1, arg_extremum, "i64 index of the min along axis (0), keepdims=1, select_last_index=0");
}

}  // namespace pock
