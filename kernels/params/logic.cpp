#include "kernels/params/logic.hpp"

#include <string>

#include "kernels/params/attr_reader.hpp"

namespace pock::params {

bool shift_direction_from_name(std::string_view name, bool* left) {
  if (name != "left" && name != "right") return false;
  *left = name == "left";
  return true;
}

Status parse(const pock_op_desc& op, BitShiftParams* out) {
  AttrReader r(op);
  const std::string_view direction = r.text("direction", "");
  if (!shift_direction_from_name(direction, &out->left)) {
    r.invalid("direction", "must be \"left\" or \"right\", got '" + std::string(direction) + "'");
  }
  return r.status();
}

}  // namespace pock::params
