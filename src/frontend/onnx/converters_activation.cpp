// ONNX activations with attributes or a trainable slope -> pock ops of the same names (docs/ops.md):
// Elu, Selu, Celu, ThresholdedRelu, Softplus, Softsign, Mish and PRelu. Attributes are passed on
// with ONNX's defaults written out, so that the graph says what it computes.
#include "frontend/onnx/import_context.hpp"

namespace pock::onnx_import {
namespace {

struct FloatAttr {
  const char* name;
  double fallback;
};

// Elu, Selu, Celu, ThresholdedRelu carry float attributes; Softplus, Softsign, Mish none.
template <const char* kOp, const FloatAttr*... kAttrs>
Status convert_activation(NodeView& node) {
  Attrs attrs;
  for (const FloatAttr* a : {static_cast<const FloatAttr*>(nullptr), kAttrs...}) {
    if (!a) continue;
    POCK_ASSIGN_OR_RETURN(double v, node.attrs().get_float(a->name, a->fallback));
    attrs.set(a->name, v);
  }
  POCK_ASSIGN_OR_RETURN(TensorId x, node.input(0));
  return node.emit_final(kOp, {x}, attrs);
}
constexpr char kElu[] = "Elu", kSelu[] = "Selu", kCelu[] = "Celu", kThresholdedRelu[] = "ThresholdedRelu",
               kSoftplus[] = "Softplus", kSoftsign[] = "Softsign", kMish[] = "Mish";
constexpr FloatAttr kUnitAlpha{"alpha", 1.0};
// ONNX's Selu defaults (f32 values, as the attribute would hold them).
constexpr FloatAttr kSeluAlpha{"alpha", 1.67326319217681884765625};
constexpr FloatAttr kSeluGamma{"gamma", 1.05070102214813232421875};

// The slope is a weight that trains (PyTorch writes nn.PReLU(C)'s as [C] unsqueezed to [C, 1, 1], and
// nn.PReLU()'s single shared slope as one element, which must train too); the schema checks that it
// broadcasts to x as ONNX's unidirectional broadcast requires.
Status convert_prelu(NodeView& node) {
  POCK_ASSIGN_OR_RETURN(TensorId x, node.input(0));
  POCK_ASSIGN_OR_RETURN(TensorId slope, node.input_as_weight(1));
  return node.emit_final("PRelu", {x, slope});
}

}  // namespace

void register_activation_converters(std::unordered_map<std::string, Converter>& t) {
  t["Elu"] = convert_activation<kElu, &kUnitAlpha>;
  t["Selu"] = convert_activation<kSelu, &kSeluAlpha, &kSeluGamma>;
  t["Celu"] = convert_activation<kCelu, &kUnitAlpha>;
  t["ThresholdedRelu"] = convert_activation<kThresholdedRelu, &kUnitAlpha>;
  t["Softplus"] = convert_activation<kSoftplus>;
  t["Softsign"] = convert_activation<kSoftsign>;
  t["Mish"] = convert_activation<kMish>;
  t["PRelu"] = convert_prelu;
}

}  // namespace pock::onnx_import
