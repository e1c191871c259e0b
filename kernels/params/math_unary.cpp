#include "kernels/params/math_unary.hpp"

#include <string>

#include "kernels/params/attr_reader.hpp"

namespace pock::params {

Status parse(const pock_op_desc& op, ShrinkParams* out) {
  AttrReader r(op);
  out->lambd = r.real("lambd", 0.5);
  out->bias = r.real("bias", 0.0);
  if (!(out->lambd >= 0.0)) r.invalid("lambd", "is " + std::to_string(out->lambd) + ", not >= 0");
  return r.status();
}

Status parse(const pock_op_desc& op, IsInfParams* out) {
  AttrReader r(op);
  out->negative = r.integer("detect_negative", 1) != 0;
  out->positive = r.integer("detect_positive", 1) != 0;
  return r.status();
}

Status parse(const pock_op_desc& op, HardmaxParams* out) {
  AttrReader r(op);
  const int64_t rank = op.num_inputs > 0 ? op.inputs[0].rank : 0;
  const int64_t axis = r.integer("axis", -1);
  if (axis < -rank || axis >= rank) {
    r.invalid("axis", "is " + std::to_string(axis) + ", out of range for rank " + std::to_string(rank));
  } else {
    out->axis = static_cast<int>(axis < 0 ? axis + rank : axis);
  }
  return r.status();
}

}  // namespace pock::params
