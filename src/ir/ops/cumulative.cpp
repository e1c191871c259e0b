// cumulative family schemas: CumSum, ONNX's running sum along one axis (the axis input of ONNX is
// the attribute `axis` here: the importer reads it from its constant).
#include <string>

#include "ir/ops/schema_helpers.hpp"

namespace pock {
namespace {

// The dtypes ONNX's CumSum allows that pock carries; f16 and bf16 would sum in their own precision,
// which no caller has needed.
bool cumsum_dtype(DType dt) {
  return dt == DType::kF32 || dt == DType::kF64 || dt == DType::kI32 || dt == DType::kI64 || dt == DType::kU32 ||
         dt == DType::kU64;
}

Status cumsum(InferContext& ctx) {
  const TensorType& x = ctx.in(0);
  if (!cumsum_dtype(x.dtype)) {
    return ctx.error(std::string("x must be f32, f64, i32, i64, u32 or u64, got ") + dtype_name(x.dtype));
  }
  if (x.shape.empty()) return ctx.shape_error("x must have at least one dim (a scalar has no axis to sum along)");
  auto axis = normalize_axis(ctx.attrs->get_int("axis", 0), static_cast<int>(x.shape.size()));
  if (!axis.is_ok()) return ctx.error(axis.status().message());
  for (const char* flag : {"exclusive", "reverse"}) {
    const int64_t v = ctx.attrs->get_int(flag, 0);
    if (v != 0 && v != 1) return ctx.error(std::string(flag) + " must be 0 or 1, got " + std::to_string(v));
  }
  ctx.outputs = {x};
  return Status::ok();
}

}  // namespace

void register_cumulative_schemas(SchemaRegistry& r) {
  schema::add(r, "CumSum", 1, 1, 1, 1, cumsum,
              "running sum of x along axis (0); exclusive=1 leaves out the element itself, reverse=1 sums from the end "
              "(ONNX CumSum with its axis input as an attribute)");
}

}  // namespace pock
