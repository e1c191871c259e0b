#include "kernels/params/shape.hpp"

#include <string>
#include <string_view>

#include "kernels/params/attr_reader.hpp"

namespace pock::params {
namespace {

std::vector<int64_t> int_list(const pock_op_desc& op, std::string_view name, AttrReader& r) {
  for (int32_t i = 0; i < op.num_attrs; ++i) {
    const pock_attr& a = op.attrs[i];
    if (!a.name || name != a.name) continue;
    if (a.kind == POCK_ATTR_INT) return {a.i};
    if (a.kind != POCK_ATTR_INTS) {
      r.invalid(name, "must be a list of integers");
      return {};
    }
    return std::vector<int64_t>(a.ints, a.ints + a.count);
  }
  return {};
}

}  // namespace

Status parse(const pock_op_desc& op, ShapeParams* out) {
  AttrReader r(op);
  out->perm = int_list(op, "perm", r);
  out->axis = r.integer("axis", 0);
  out->starts = int_list(op, "starts", r);
  out->axes = int_list(op, "axes", r);
  out->steps = int_list(op, "steps", r);
  out->pads = int_list(op, "pads", r);
  out->value = r.real("value", 0.0);
  out->upper = r.integer("upper", 1) != 0;
  out->k = r.integer("k", 0);
  const std::string_view mode = r.text("mode", "constant");
  if (mode == "reflect") out->pad_mode = PadMode::kReflect;
  else if (mode == "edge") out->pad_mode = PadMode::kEdge;
  else if (mode != "constant") r.invalid("mode", "is '" + std::string(mode) + "', not constant, reflect or edge");
  return r.status();
}

}  // namespace pock::params
