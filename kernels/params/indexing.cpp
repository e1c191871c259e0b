#include "kernels/params/indexing.hpp"

#include "kernels/params/attr_reader.hpp"

namespace pock::params {

Status parse(const pock_op_desc& op, TopKParams* out) {
  AttrReader r(op);
  out->k = r.integer("k", 0);
  if (out->k < 1) r.invalid("k", "must be at least 1");
  out->axis = r.integer("axis", -1);
  out->largest = r.integer("largest", 1) != 0;
  return r.status();
}

Status parse(const pock_op_desc& op, OneHotParams* out) {
  AttrReader r(op);
  out->depth = r.integer("depth", 0);
  if (out->depth < 1) r.invalid("depth", "must be at least 1");
  out->axis = r.integer("axis", -1);
  return r.status();
}

Status parse(const pock_op_desc& op, ReverseSequenceParams* out) {
  AttrReader r(op);
  out->batch_axis = r.integer("batch_axis", 1);
  out->time_axis = r.integer("time_axis", 0);
  if (out->batch_axis == out->time_axis) r.invalid("batch_axis", "must differ from time_axis");
  return r.status();
}

}  // namespace pock::params
