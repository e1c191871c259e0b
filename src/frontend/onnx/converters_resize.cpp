// ONNX Resize (opsets 10-19) and Upsample (opsets 7-9) as pock's Resize, the output shape and the
// per-axis scales resolved here from constant operands (opset 18's axes and
// keep_aspect_ratio_policy included). Upsample and opset 10's two-input Resize
// are Resize with asymmetric coordinates and nearest rounding down (what their outputs were
// defined as before opset 11 named the modes).
#include <algorithm>
#include <cmath>
#include <string>

#include "frontend/onnx/import_context.hpp"

namespace pock::onnx_import {
namespace {

using Ints = std::vector<int64_t>;
using Reals = std::vector<double>;

struct Target {
  Ints sizes;
  Reals scales;
};

// Output size floor(in * scale) (ONNX's reference truncates in float64), scale as given.
Result<Target> from_scales(NodeView& node, int input, const Reals& scales) {
  const Shape& x = node.value(0).shape;
  if (scales.size() != x.size()) {
    return node.input_error(input, "(scales) must hold one value per axis of " + shape_str(x) + ", got " +
                                       std::to_string(scales.size()));
  }
  Target t{{}, scales};
  for (size_t d = 0; d < x.size(); ++d) {
    if (!(scales[d] > 0.0)) return node.input_error(input, "(scales) must be positive");
    t.sizes.push_back(static_cast<int64_t>(std::floor(scales[d] * static_cast<double>(x[d]))));
    if (t.sizes.back() < 1) {
      return node.input_error(input, "(scales) shrink axis " + std::to_string(d) + " of " + shape_str(x) + " to nothing");
    }
  }
  return t;
}

// Scales out / in (the ratio the coordinate mapping uses when sizes are given).
Result<Target> from_sizes(NodeView& node, int input, const Ints& sizes) {
  const Shape& x = node.value(0).shape;
  if (sizes.size() != x.size()) {
    return node.input_error(input, "(sizes) must hold one value per axis of " + shape_str(x) + ", got " + shape_str(sizes));
  }
  Target t{sizes, {}};
  for (size_t d = 0; d < x.size(); ++d) {
    if (sizes[d] < 1) return node.input_error(input, "(sizes) must be positive, got " + shape_str(sizes));
    t.scales.push_back(static_cast<double>(sizes[d]) / static_cast<double>(x[d]));
  }
  return t;
}

// Opset 18's axes: scales or sizes then name these axes only (negative counts from the end); the
// others keep scale 1 and their size. Empty: every axis, in order.
Result<Ints> resize_axes(NodeView& node) {
  POCK_ASSIGN_OR_RETURN(Ints axes, node.attrs().get_ints("axes", {}));
  const int64_t rank = static_cast<int64_t>(node.value(0).shape.size());
  std::vector<bool> seen(static_cast<size_t>(rank), false);
  for (int64_t& a : axes) {
    if (a < -rank || a >= rank) return node.error("axes " + shape_str(axes) + " name an axis outside rank " + std::to_string(rank));
    if (a < 0) a += rank;
    if (seen[static_cast<size_t>(a)]) return node.error("axes " + shape_str(axes) + " repeat an axis");
    seen[static_cast<size_t>(a)] = true;
  }
  return axes;
}

// `given` holds one value per listed axis; the result one per axis of x, `keep` elsewhere.
template <typename T>
Result<std::vector<T>> on_every_axis(NodeView& node, int input, const char* what, const Ints& axes, const std::vector<T>& given,
                                     const std::vector<T>& keep) {
  if (axes.empty()) return given;
  if (given.size() != axes.size()) {
    std::string message = std::string("(") + what;  // grown in place: GCC 12 warns, falsely, on '"(" + string' (-Wrestrict)
    message += ") must hold one value per axis in axes " + shape_str(axes) + ", got " + std::to_string(given.size());
    return node.input_error(input, message);
  }
  std::vector<T> full = keep;
  for (size_t i = 0; i < axes.size(); ++i) full[static_cast<size_t>(axes[i])] = given[i];
  return full;
}

// keep_aspect_ratio_policy not_larger / not_smaller (with sizes): one scale for the listed axes,
// the smallest / largest of size / input there, and sizes round(scale * input) rounding halves up,
// as ONNX's reference does.
Result<Target> keep_aspect_ratio(NodeView& node, const std::string& policy, const Ints& axes, const Ints& sizes) {
  const Shape& x = node.value(0).shape;
  Ints listed = axes;
  if (listed.empty()) {
    for (int64_t d = 0; d < static_cast<int64_t>(x.size()); ++d) listed.push_back(d);
  }
  double scale = policy == "not_larger" ? HUGE_VAL : 0.0;
  for (int64_t d : listed) {
    const double ratio = static_cast<double>(sizes[static_cast<size_t>(d)]) / static_cast<double>(x[static_cast<size_t>(d)]);
    scale = policy == "not_larger" ? std::min(scale, ratio) : std::max(scale, ratio);
  }
  Target t{Ints(x.begin(), x.end()), Reals(x.size(), 1.0)};
  for (int64_t d : listed) {
    t.sizes[static_cast<size_t>(d)] = static_cast<int64_t>(std::floor(scale * static_cast<double>(x[static_cast<size_t>(d)]) + 0.5));
    t.scales[static_cast<size_t>(d)] = scale;
    if (t.sizes[static_cast<size_t>(d)] < 1) {
      return node.input_error(3, "(sizes) with keep_aspect_ratio_policy " + policy + " shrink axis " + std::to_string(d) +
                                     " of " + shape_str(x) + " to nothing");
    }
  }
  return t;
}

Result<Reals> const_reals(NodeView& node, int input, const char* what) {
  POCK_ASSIGN_OR_RETURN(const HostTensor* t, node.const_input(input, what));
  Reals v;
  for (int64_t k = 0; k < t->size(); ++k) v.push_back(t->as_double(k));
  return v;
}

Status emit_resize(NodeView& node, const Target& t, const std::string& mode, Attrs attrs) {
  if (mode != "nearest" && mode != "linear" && mode != "cubic") {
    return node.error("mode must be nearest, linear or cubic, got '" + mode + "'");
  }
  attrs.set("mode", mode);
  attrs.set("sizes", t.sizes);
  attrs.set("scales", t.scales);
  POCK_ASSIGN_OR_RETURN(TensorId x, node.input(0));
  if (node.value(0).dtype != DType::kF32) return node.input_error(0, "must be float32 (pock resizes f32 tensors)");
  return node.emit_final("Resize", {x}, std::move(attrs));
}

// The modes pock's Resize does not implement are refused by name.
Status check_supported(NodeView& node, const std::string& coordinates) {
  if (coordinates == "tf_crop_and_resize") {
    return node.unsupported("coordinate_transformation_mode tf_crop_and_resize (resizing a region of interest) is not "
                            "implemented");
  }
  POCK_ASSIGN_OR_RETURN(int64_t antialias, node.attrs().get_int("antialias", 0));
  if (antialias != 0) return node.unsupported("antialias=1 (a widened filter when downsampling) is not implemented");
  return Status::ok();
}

Status convert_resize(NodeView& node) {
  POCK_ASSIGN_OR_RETURN(std::string mode, node.attrs().get_string("mode", "nearest"));
  if (node.num_inputs() == 2) {  // opset 10: (X, scales)
    POCK_ASSIGN_OR_RETURN(Reals scales, const_reals(node, 1, "scales"));
    POCK_ASSIGN_OR_RETURN(Target t, from_scales(node, 1, scales));
    return emit_resize(node, t, mode,
                       Attrs{{"coordinate_transformation_mode", std::string("asymmetric")}, {"nearest_mode", std::string("floor")}});
  }
  POCK_ASSIGN_OR_RETURN(std::string coordinates, node.attrs().get_string("coordinate_transformation_mode", "half_pixel"));
  POCK_RETURN_IF_ERROR(check_supported(node, coordinates));
  POCK_ASSIGN_OR_RETURN(Ints axes, resize_axes(node));
  POCK_ASSIGN_OR_RETURN(std::string policy, node.attrs().get_string("keep_aspect_ratio_policy", "stretch"));
  if (policy != "stretch" && policy != "not_larger" && policy != "not_smaller") {
    return node.error("keep_aspect_ratio_policy must be stretch, not_larger or not_smaller, got '" + policy + "'");
  }
  const Shape& x = node.value(0).shape;
  Target t;
  if (node.has_input(3) && numel(node.value(3).shape) > 0) {
    POCK_ASSIGN_OR_RETURN(Ints given, node.const_ints(3, "sizes"));
    POCK_ASSIGN_OR_RETURN(Ints sizes, on_every_axis(node, 3, "sizes", axes, given, Ints(x.begin(), x.end())));
    if (policy == "stretch") {
      POCK_ASSIGN_OR_RETURN(t, from_sizes(node, 3, sizes));
    } else {
      POCK_ASSIGN_OR_RETURN(t, keep_aspect_ratio(node, policy, axes, sizes));
    }
  } else if (node.has_input(2) && numel(node.value(2).shape) > 0) {
    POCK_ASSIGN_OR_RETURN(Reals given, const_reals(node, 2, "scales"));
    POCK_ASSIGN_OR_RETURN(Reals scales, on_every_axis(node, 2, "scales", axes, given, Reals(x.size(), 1.0)));
    POCK_ASSIGN_OR_RETURN(t, from_scales(node, 2, scales));
  } else {
    return node.error("needs scales (input 2) or sizes (input 3)");
  }
  POCK_ASSIGN_OR_RETURN(std::string nearest, node.attrs().get_string("nearest_mode", "round_prefer_floor"));
  POCK_ASSIGN_OR_RETURN(double cubic_a, node.attrs().get_float("cubic_coeff_a", -0.75));
  POCK_ASSIGN_OR_RETURN(int64_t exclude_outside, node.attrs().get_int("exclude_outside", 0));
  return emit_resize(node, t, mode,
                     Attrs{{"coordinate_transformation_mode", coordinates},
                           {"nearest_mode", nearest},
                           {"cubic_coeff_a", cubic_a},
                           {"exclude_outside", exclude_outside}});
}

Status convert_upsample(NodeView& node) {
  POCK_ASSIGN_OR_RETURN(std::string mode, node.attrs().get_string("mode", "nearest"));
  if (mode == "bilinear") mode = "linear";  // opset 7's spelling
  Reals scales;
  if (node.has_input(1)) {
    POCK_ASSIGN_OR_RETURN(scales, const_reals(node, 1, "scales"));
  } else {
    POCK_ASSIGN_OR_RETURN(scales, node.attrs().get_floats("scales", {}));
  }
  POCK_ASSIGN_OR_RETURN(Target t, from_scales(node, 1, scales));
  return emit_resize(node, t, mode,
                     Attrs{{"coordinate_transformation_mode", std::string("asymmetric")}, {"nearest_mode", std::string("floor")}});
}

}  // namespace

void register_resize_converters(std::unordered_map<std::string, Converter>& t) {
  t["Resize"] = convert_resize;
  t["Upsample"] = convert_upsample;
}

}  // namespace pock::onnx_import
