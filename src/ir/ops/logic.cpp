// logic family schemas: comparisons (Equal, Less, LessOrEqual, Greater, GreaterOrEqual) from two
// tensors of one dtype to bool, the connectives And, Or, Xor, Not on bool, and BitShift on unsigned
// integers. Binary ops broadcast as numpy does. Element semantics: kernels/logic_ops.hpp.
#include <string>

#include "ir/ops/schema_helpers.hpp"
#include "kernels/params/logic.hpp"

namespace pock {
namespace {

// BitShift's dtypes: the unsigned integers.
bool is_unsigned_integer(DType dt) {
  return dt == DType::kU8 || dt == DType::kU16 || dt == DType::kU32 || dt == DType::kU64;
}

Status require_dtype(const InferContext& ctx, bool (*allowed)(DType), const char* what) {
  for (size_t i = 0; i < ctx.inputs.size(); ++i) {
    if (!allowed(ctx.in(i).dtype)) {
      return ctx.error("input " + std::to_string(i) + " must be " + what + ", got " + dtype_name(ctx.in(i).dtype));
    }
  }
  return Status::ok();
}

bool is_bool(DType dt) { return dt == DType::kBool; }
bool is_ordered(DType dt) { return dt != DType::kBool; }
bool any_dtype(DType) { return true; }

// Numpy broadcast of two inputs of one dtype; the output is bool.
template <bool (*Allowed)(DType)>
Status comparison(InferContext& ctx) {
  POCK_RETURN_IF_ERROR(require_dtype(ctx, Allowed, "numeric (bool has no order)"));
  POCK_RETURN_IF_ERROR(schema::broadcast_binary(ctx));
  ctx.outputs[0].dtype = DType::kBool;
  return Status::ok();
}

Status connective(InferContext& ctx) {
  POCK_RETURN_IF_ERROR(require_dtype(ctx, is_bool, "bool"));
  return schema::broadcast_binary(ctx);
}

Status negation(InferContext& ctx) {
  POCK_RETURN_IF_ERROR(require_dtype(ctx, is_bool, "bool"));
  return schema::same_as_first(ctx);
}

Status bit_shift(InferContext& ctx) {
  const std::string direction(ctx.attrs->get_string("direction", ""));
  bool left = true;
  if (!params::shift_direction_from_name(direction, &left)) {
    return ctx.error("attribute 'direction' must be \"left\" or \"right\", got '" + direction + "'");
  }
  POCK_RETURN_IF_ERROR(require_dtype(ctx, is_unsigned_integer, "an unsigned integer"));
  return schema::broadcast_binary(ctx);
}

}  // namespace

void register_logic_schemas(SchemaRegistry& r) {
  using schema::add;
  add(r, "Equal", 2, 2, 1, 1, comparison<any_dtype>, "a == b (bool), numpy broadcast");
  for (const char* op : {"Less", "LessOrEqual", "Greater", "GreaterOrEqual"}) {
    add(r, op, 2, 2, 1, 1, comparison<is_ordered>, "a < b, a <= b, a > b, a >= b (bool), numpy broadcast");
  }
  for (const char* op : {"And", "Or", "Xor"}) add(r, op, 2, 2, 1, 1, connective, "bool connective, numpy broadcast");
  add(r, "Not", 1, 1, 1, 1, negation, "!x on bool");
  add(r, "BitShift", 2, 2, 1, 1, bit_shift, "x << n or x >> n (direction), unsigned integers, numpy broadcast");
  // Output element i is computed from input element i alone when input 0 has the output's shape
  // (the planner lends input 0's buffer only then, and only at the same byte size).
  for (const char* op : {"And", "Or", "Xor", "Not", "BitShift"}) r.set_inplace(op, 0);
}

}  // namespace pock
