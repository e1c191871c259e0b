#include "kernels/params/norm.hpp"

#include <string_view>

#include "kernels/params/attr_reader.hpp"

namespace pock::params {

RowSplit AxisNormParams::rows(const pock_tensor_desc& x) const {
  RowSplit s{1, 1};
  for (int d = 0; d < x.rank; ++d) (d < axis ? s.rows : s.features) *= x.dims[d];
  return s;
}

AxisSplit AxisNormParams::around(const pock_tensor_desc& x) const {
  AxisSplit s;
  for (int d = 0; d < x.rank; ++d) {
    if (d < axis) s.outer *= x.dims[d];
    if (d == axis) s.extent = x.dims[d];
    if (d > axis) s.inner *= x.dims[d];
  }
  return s;
}

Status parse(const pock_op_desc& op, AxisNormParams* out) {
  AttrReader r(op);
  const int64_t rank = op.num_inputs > 0 ? op.inputs[0].rank : 0;
  const int64_t axis = r.integer("axis", -1);
  out->axis = axis < 0 ? axis + rank : axis;
  if (out->axis < 0 || out->axis >= rank) {
    r.invalid("axis", "is " + std::to_string(axis) + ", out of range for rank " + std::to_string(rank));
  }
  const bool rms = std::string_view(op.op).starts_with("RMSNorm");
  out->eps = r.real("eps", rms ? 1e-6 : 1e-5);
  if (!(out->eps >= 0.0)) r.invalid("eps", "must not be negative");
  return r.status();
}

Status parse(const pock_op_desc& op, BatchNormParams* out) {
  AttrReader r(op);
  out->eps = r.real("eps", 1e-5);
  out->momentum = r.real("momentum", 0.1);
  out->activation = r.activation();
  if (!(out->eps >= 0.0)) r.invalid("eps", "must not be negative");
  return r.status();
}

}  // namespace pock::params
