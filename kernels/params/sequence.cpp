#include "kernels/params/sequence.hpp"

#include "kernels/params/attr_reader.hpp"

namespace pock::params {

Status parse(const pock_op_desc& op, SequenceParams* out) {
  AttrReader r(op);
  out->axis = r.integer("axis", 0);
  out->theta = r.real("theta", 10000.0);
  out->interleaved = r.integer("interleaved", 0) != 0;
  out->inverse = r.integer("inverse", 0) != 0;
  out->value = r.real("value", -std::numeric_limits<double>::infinity());
  out->ratio = r.real("ratio", 0.5);
  out->seed = static_cast<uint64_t>(r.integer("seed", 0));
  out->scale = r.real("scale", 1.0);
  if (!(out->ratio >= 0.0 && out->ratio < 1.0)) r.invalid("ratio", "must be in [0, 1)");
  return r.status();
}

}  // namespace pock::params
