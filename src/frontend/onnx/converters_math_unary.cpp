// ONNX elementwise math at run time -> pock's math_unary family (docs/ops.md): Acos .. Sign of
// kernels/params/math_unary.hpp under their ONNX names, Shrink, IsNaN, IsInf and Hardmax (opset
// 13's form: opset_adapters.cpp rewrites the older 2-D coercion), and the variadic Sum and Mean
// as chains of broadcasting Adds (Mean scaled by 1/n at the end).
#include <string>

#include "frontend/onnx/import_context.hpp"
#include "kernels/params/math_unary.hpp"

namespace pock::onnx_import {
namespace {

// An attribute passed on with ONNX's default written out, so that the graph says what it computes.
struct AttrDefault {
  const char* name;
  double fallback;
  bool integer;
};

template <const char* kOp, const AttrDefault*... kAttrs>
Status convert_same_name(NodeView& node) {
  Attrs attrs;
  for (const AttrDefault* a : {static_cast<const AttrDefault*>(nullptr), kAttrs...}) {
    if (!a) continue;
    if (a->integer) {
      POCK_ASSIGN_OR_RETURN(int64_t v, node.attrs().get_int(a->name, static_cast<int64_t>(a->fallback)));
      attrs.set(a->name, v);
    } else {
      POCK_ASSIGN_OR_RETURN(double v, node.attrs().get_float(a->name, a->fallback));
      attrs.set(a->name, v);
    }
  }
  POCK_ASSIGN_OR_RETURN(TensorId x, node.input(0));
  return node.emit_final(kOp, {x}, attrs);
}
#define POCK_MATH_UNARY_NAME(Op) constexpr char k##Op[] = #Op;
POCK_MATH_UNARY_FUNCTIONS(POCK_MATH_UNARY_NAME)
#undef POCK_MATH_UNARY_NAME
constexpr char kShrink[] = "Shrink", kIsNaN[] = "IsNaN", kIsInf[] = "IsInf", kHardmax[] = "Hardmax";
constexpr AttrDefault kLambd{"lambd", 0.5, false}, kBias{"bias", 0.0, false};
constexpr AttrDefault kDetectNegative{"detect_negative", 1, true}, kDetectPositive{"detect_positive", 1, true};
constexpr AttrDefault kAxis{"axis", -1, true};

// Sum and Mean: inputs added left to right with numpy broadcasting, as onnxruntime does; Mean
// divides the total by the input count (a multiplication by 1/n, exact for n a power of 2 and
// within an ulp otherwise).
Status convert_sum_mean(NodeView& node, bool mean) {
  const int n = node.num_inputs();
  if (n < 1) return node.error("needs at least one input");
  POCK_ASSIGN_OR_RETURN(TensorId acc, node.input(0));
  for (int i = 1; i < n; ++i) {
    POCK_ASSIGN_OR_RETURN(TensorId b, node.input(i));
    if (i + 1 == n && !mean) return node.emit_final("Add", {acc, b});
    POCK_ASSIGN_OR_RETURN(auto sum, node.emit("Add", {acc, b}, {}, "sum" + std::to_string(i)));
    acc = sum[0];
  }
  if (!mean || n == 1) return node.bind_output(0, acc);
  if (!is_float(node.ctx().graph.tensor(acc).dtype)) return node.unsupported("Mean of integer tensors");
  return node.emit_final("ScaleShift", {acc}, Attrs{{"alpha", 1.0 / n}});
}
Status convert_sum(NodeView& node) { return convert_sum_mean(node, false); }
Status convert_mean(NodeView& node) { return convert_sum_mean(node, true); }

}  // namespace

void register_math_unary_converters(std::unordered_map<std::string, Converter>& t) {
#define POCK_MATH_UNARY_CONVERTER(Op) t[#Op] = convert_same_name<k##Op>;
  POCK_MATH_UNARY_FUNCTIONS(POCK_MATH_UNARY_CONVERTER)
#undef POCK_MATH_UNARY_CONVERTER
  t["Shrink"] = convert_same_name<kShrink, &kLambd, &kBias>;
  t["IsNaN"] = convert_same_name<kIsNaN>;
  t["IsInf"] = convert_same_name<kIsInf, &kDetectNegative, &kDetectPositive>;
  t["Hardmax"] = convert_same_name<kHardmax, &kAxis>;
  t["Sum"] = convert_sum;
  t["Mean"] = convert_mean;
}

}  // namespace pock::onnx_import
