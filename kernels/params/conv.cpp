#include "kernels/params/conv.hpp"

#include <string>
#include <string_view>

#include "kernels/params/attr_reader.hpp"

namespace pock::params {
namespace {

// Element i of an int-list attribute; `fallback` when the list is absent or shorter.
int64_t list_value(const pock_op_desc& op, std::string_view name, int64_t i, int64_t fallback, AttrReader& r) {
  for (int32_t k = 0; k < op.num_attrs; ++k) {
    const pock_attr& a = op.attrs[k];
    if (!a.name || name != a.name) continue;
    if (a.kind == POCK_ATTR_INT) return i == 0 ? a.i : fallback;  // a one-element list written as a scalar
    if (a.kind != POCK_ATTR_INTS) {
      r.invalid(name, "must be a list of integers");
      return fallback;
    }
    return i < a.count ? a.ints[i] : fallback;
  }
  return fallback;
}

}  // namespace

Status parse(const pock_op_desc& op, WindowParams* out) {
  AttrReader r(op);
  const bool pool = std::string_view(op.op).find("Pool") != std::string_view::npos;
  out->kernel_h = list_value(op, "kernel", 0, 1, r);
  out->kernel_w = list_value(op, "kernel", 1, 1, r);
  out->stride_h = list_value(op, "strides", 0, pool ? out->kernel_h : 1, r);
  out->stride_w = list_value(op, "strides", 1, pool ? out->kernel_w : 1, r);
  out->dilation_h = list_value(op, "dilations", 0, 1, r);
  out->dilation_w = list_value(op, "dilations", 1, 1, r);
  out->pad_top = list_value(op, "pads", 0, 0, r);
  out->pad_left = list_value(op, "pads", 1, 0, r);
  out->pad_bottom = list_value(op, "pads", 2, 0, r);
  out->pad_right = list_value(op, "pads", 3, 0, r);
  out->groups = r.integer("groups", 1);
  out->count_include_pad = r.integer("count_include_pad", 0) != 0;
  const std::string_view layout = r.text("layout", "NCHW");
  if (layout != "NCHW" && layout != "NHWC") r.invalid("layout", "is '" + std::string(layout) + "', not NCHW or NHWC");
  out->nhwc = layout == "NHWC";
  out->activation = r.activation();
  const std::string_view compute = r.text("compute", "f32");
  if (compute != "f32" && compute != "bf16") r.invalid("compute", "is '" + std::string(compute) + "', not f32 or bf16");
  out->bf16 = compute == "bf16";
  if (out->kernel_h < 1 || out->kernel_w < 1) r.invalid("kernel", "must be positive");
  if (out->stride_h < 1 || out->stride_w < 1) r.invalid("strides", "must be positive");
  if (out->dilation_h < 1 || out->dilation_w < 1) r.invalid("dilations", "must be positive");
  if (out->pad_top < 0 || out->pad_left < 0 || out->pad_bottom < 0 || out->pad_right < 0) r.invalid("pads", "must not be negative");
  if (out->groups < 1) r.invalid("groups", "must be positive");
  return r.status();
}

}  // namespace pock::params
