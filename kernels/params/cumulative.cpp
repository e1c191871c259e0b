#include "kernels/params/cumulative.hpp"

#include <string>

#include "kernels/params/attr_reader.hpp"

namespace pock::params {

Status parse(const pock_op_desc& op, CumulativeParams* out) {
  AttrReader r(op);
  out->axis = r.axis("axis", op.num_inputs > 0 ? op.inputs[0].rank : 0, 0);
  out->exclusive = r.integer("exclusive", 0) != 0;
  out->reverse = r.integer("reverse", 0) != 0;
  return r.status();
}

}  // namespace pock::params
