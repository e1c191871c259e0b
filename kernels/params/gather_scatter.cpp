#include "kernels/params/gather_scatter.hpp"

#include <string>

#include "kernels/params/attr_reader.hpp"

namespace pock::params {

bool scatter_reduction_from_name(std::string_view name, ScatterReduction* out) {
  static constexpr struct {
    std::string_view name;
    ScatterReduction value;
  } kNames[] = {{"none", ScatterReduction::kNone},
                {"add", ScatterReduction::kAdd},
                {"mul", ScatterReduction::kMul},
                {"max", ScatterReduction::kMax},
                {"min", ScatterReduction::kMin}};
  for (const auto& n : kNames) {
    if (n.name == name) {
      *out = n.value;
      return true;
    }
  }
  return false;
}

Status parse(const pock_op_desc& op, GatherScatterParams* out) {
  AttrReader r(op);
  out->axis = r.integer("axis", 0);
  out->batch_dims = r.integer("batch_dims", 0);
  const std::string_view reduction = r.text("reduction", "none");
  if (!scatter_reduction_from_name(reduction, &out->reduction)) {
    r.invalid("reduction", "must be none, add, mul, max or min, got '" + std::string(reduction) + "'");
  }
  return r.status();
}

}  // namespace pock::params
