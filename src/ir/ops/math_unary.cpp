// math_unary family schemas: the elementwise functions of kernels/params/math_unary.hpp (Acos ..
// Sign), Shrink, the float tests IsNaN and IsInf (bool outputs, as Where's condition), and Hardmax.
#include <string>

#include "ir/ops/schema_helpers.hpp"
#include "kernels/params/math_unary.hpp"

namespace pock {
namespace {

Status require_f32(const InferContext& ctx) {
  if (ctx.in(0).dtype != DType::kF32) return ctx.error(std::string("x must be f32, got ") + dtype_name(ctx.in(0).dtype));
  return Status::ok();
}

Status same_f32(InferContext& ctx) {
  POCK_RETURN_IF_ERROR(require_f32(ctx));
  return schema::same_as_first(ctx);
}

Status shrink(InferContext& ctx) {
  const double lambd = ctx.attrs->get_float("lambd", 0.5);
  if (!(lambd >= 0.0)) return ctx.error("lambd must be >= 0, got " + std::to_string(lambd));
  return same_f32(ctx);
}

Status float_test(InferContext& ctx) {
  POCK_RETURN_IF_ERROR(require_f32(ctx));
  ctx.outputs = {TensorType{DType::kBool, ctx.in(0).shape}};
  return Status::ok();
}

Status hardmax(InferContext& ctx) {
  POCK_RETURN_IF_ERROR(require_f32(ctx));
  const int64_t rank = static_cast<int64_t>(ctx.in(0).shape.size());
  const int64_t axis = ctx.attrs->get_int("axis", -1);
  if (rank == 0) return ctx.shape_error("x must have rank >= 1, got a scalar");
  if (axis < -rank || axis >= rank) {
    return ctx.error("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  }
  return schema::same_as_first(ctx);
}

}  // namespace

void register_math_unary_schemas(SchemaRegistry& r) {
  using schema::add;
#define POCK_MATH_UNARY_SCHEMA(Op) add(r, #Op, 1, 1, 1, 1, same_f32, "elementwise " #Op " of f32 (ONNX " #Op ")");
  POCK_MATH_UNARY_FUNCTIONS(POCK_MATH_UNARY_SCHEMA)
#undef POCK_MATH_UNARY_SCHEMA
  add(r, "Shrink", 1, 1, 1, 1, shrink, "x + bias if x < -lambd, x - bias if x > lambd, else 0 (lambd 0.5, bias 0)");
  add(r, "IsNaN", 1, 1, 1, 1, float_test, "bool: x is NaN");
  add(r, "IsInf", 1, 1, 1, 1, float_test, "bool: x is an infinity counted by detect_negative / detect_positive (both 1)");
  add(r, "Hardmax", 1, 1, 1, 1, hardmax, "1 at the first maximum along axis (default -1), 0 elsewhere");
  // Element i is read before element i is written, so y may take x's buffer.
#define POCK_MATH_UNARY_INPLACE(Op) r.set_inplace(#Op, 0);
  POCK_MATH_UNARY_FUNCTIONS(POCK_MATH_UNARY_INPLACE)
#undef POCK_MATH_UNARY_INPLACE
  r.set_inplace("Shrink", 0);
}

}  // namespace pock
