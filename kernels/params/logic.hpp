// Typed parameters of the logic family (BitShift's direction), parsed once at prepare by one
// parser every backend shares. The comparisons and And/Or/Xor/Not have no attributes.
#pragma once
#include <string_view>

#include "pock/backend.h"
#include "pock/status.hpp"

namespace pock::params {

struct BitShiftParams {
  bool left = true;  // attribute direction: "left" or "right"
};

Status parse(const pock_op_desc& op, BitShiftParams* out);
// BitShift's attribute `direction`: true for "left", false for "right"; nothing for another name.
bool shift_direction_from_name(std::string_view name, bool* left);

}  // namespace pock::params
