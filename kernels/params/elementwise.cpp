#include "kernels/params/elementwise.hpp"

#include <string>
#include <string_view>

#include "kernels/params/attr_reader.hpp"

namespace pock::params {
namespace {

// ONNX's defaults (operators.md), shared by an activation and its gradient op.
constexpr double kSeluAlpha = 1.67326319217681884765625;
constexpr double kSeluGamma = 1.05070102214813232421875;

double default_alpha(std::string_view op) {
  if (op == "ScaleShift") return 1.0;
  for (std::string_view unit_alpha : {"Elu", "Celu", "ThresholdedRelu"}) {
    if (op == unit_alpha || op == std::string(unit_alpha) + "Grad") return 1.0;
  }
  if (op == "Selu" || op == "SeluGrad") return kSeluAlpha;
  return 0.01;
}

}  // namespace

Status parse(const pock_op_desc& op, ActivationParams* out) {
  AttrReader r(op);
  out->alpha = r.real("alpha", default_alpha(op.op));
  out->beta = r.real("beta", 0.0);
  out->gamma = r.real("gamma", kSeluGamma);
  if (std::string_view(op.op).substr(0, 4) == "Celu" && out->alpha == 0.0) r.invalid("alpha", "is 0 (Celu divides by it)");
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
