#include "kernels/params/elementwise.hpp"

#include <string_view>

#include "kernels/params/attr_reader.hpp"

namespace pock::params {

Status parse(const pock_op_desc& op, ActivationParams* out) {
  AttrReader r(op);
  const bool scale_shift = std::string_view(op.op) == "ScaleShift";
  out->alpha = r.real("alpha", scale_shift ? 1.0 : 0.01);
  out->beta = r.real("beta", 0.0);
  // Presence, not value, decides which bounds of a ClipMask are strict.
  for (int32_t i = 0; i < op.num_attrs; ++i) {
    const std::string_view name = op.attrs[i].name ? op.attrs[i].name : "";
    if (name == "min") out->has_lo = true;
    if (name == "max") out->has_hi = true;
  }
  out->lo = r.real("min", out->lo);
  out->hi = r.real("max", out->hi);
  out->inclusive = r.integer("inclusive", 0) != 0;
  const std::string_view form = r.text("approximate", "none");
  if (form != "none" && form != "tanh") r.invalid("approximate", "is '" + std::string(form) + "', not none or tanh");
  out->tanh_gelu = form == "tanh";
  return r.status();
}

}  // namespace pock::params
