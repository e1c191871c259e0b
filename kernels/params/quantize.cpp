#include "kernels/params/quantize.hpp"

#include "kernels/params/attr_reader.hpp"

namespace pock::params {

Status parse(const pock_op_desc& op, QuantizeParams* out) {
  AttrReader r(op);
  out->axis = r.integer("axis", 1);
  return r.status();
}

}  // namespace pock::params
