// ONNX elementwise math, activations and matrix products -> pock ops (docs/ops.md).
#include <algorithm>
#include <cmath>

#include "frontend/onnx/folding_util.hpp"

namespace pock::onnx_import {
namespace {

bool near(double a, double b) { return std::fabs(a - b) <= 1e-6 * std::max(1.0, std::fabs(b)); }

// A scalar constant folds into ScaleShift (x * alpha + beta) when it does not change the output
// shape; the result is bit-identical to the broadcast op for Add, Sub and Mul.
std::optional<double> foldable_scalar(const NodeView& node, int scalar, int other) {
  if (!node.has_input(scalar) || !node.has_input(other)) return std::nullopt;
  const Value& s = node.value(scalar);
  // ScaleShift computes in the trainable floats: an f64 operand on either side keeps its own op.
  const bool trainable = is_trainable_float(s.dtype) && is_trainable_float(node.value(other).dtype);
  if (!trainable || s.shape.size() > node.value(other).shape.size()) return std::nullopt;
  return node.scalar_input(scalar);
}

Status convert_binary(NodeView& node, const std::string& op) {
  for (int side = 0; side < 2; ++side) {
    const int other = 1 - side;
    auto c = foldable_scalar(node, side, other);
    if (!c || node.input_is_constant(other)) continue;
    double alpha = 1, beta = 0;
    if (op == "Add") beta = *c;
    else if (op == "Mul") alpha = *c;
    else if (op == "Sub" && side == 1) beta = -*c;
    else if (op == "Sub" && side == 0) alpha = -1, beta = *c;
    else continue;  // Div and Pow keep their exact rounding
    POCK_ASSIGN_OR_RETURN(TensorId x, node.input(other));
    return node.emit_final("ScaleShift", {x}, Attrs{{"alpha", alpha}, {"beta", beta}});
  }
  POCK_ASSIGN_OR_RETURN(TensorId a, node.input(0));
  POCK_ASSIGN_OR_RETURN(TensorId b, node.input(1));
  return node.emit_final(op, {a, b});
}

Status convert_add(NodeView& n) { return convert_binary(n, "Add"); }
Status convert_sub(NodeView& n) { return convert_binary(n, "Sub"); }
Status convert_mul(NodeView& n) { return convert_binary(n, "Mul"); }
Status convert_div(NodeView& n) { return convert_binary(n, "Div"); }

// An exponent of another dtype than the base (ONNX allows Pow(float, int64) and the reverse) is
// cast to the base's: pock's binary ops take one dtype.
Status convert_pow_mixed(NodeView& node) {
  POCK_ASSIGN_OR_RETURN(TensorId base, node.input(0));
  POCK_ASSIGN_OR_RETURN(TensorId exponent, node.input(1));
  const DType dt = node.ctx().graph.tensor(base).dtype;
  POCK_ASSIGN_OR_RETURN(auto cast, node.emit("Cast", {exponent}, Attrs{{"to", std::string(dtype_name(dt))}}, "exponent"));
  return node.emit_final("Pow", {base, cast[0]});
}

// Pow with a constant exponent becomes the matching unary op (exact and cheaper to differentiate).
Status convert_pow(NodeView& node) {
  if (node.value(0).dtype != node.value(1).dtype) return convert_pow_mixed(node);
  // Integers and f64: pock's unary ops (Square, Sqrt, ...) run in the trainable floats.
  if (!is_trainable_float(node.value(0).dtype)) return convert_binary(node, "Pow");
  if (auto e = node.scalar_input(1); e && node.value(1).shape.size() <= node.value(0).shape.size()) {
    const char* op = nullptr;
    if (*e == 2.0) op = "Square";
    else if (*e == 0.5) op = "Sqrt";
    else if (*e == -1.0) op = "Reciprocal";
    else if (*e == -0.5) op = "Rsqrt";
    if (*e == 1.0) {
      POCK_ASSIGN_OR_RETURN(TensorId x, node.input(0));
      return node.bind_output(0, x);
    }
    if (op) {
      POCK_ASSIGN_OR_RETURN(TensorId x, node.input(0));
      return node.emit_final(op, {x});
    }
  }
  return convert_binary(node, "Pow");
}

template <const char* kOp>
Status convert_unary(NodeView& node) {
  POCK_ASSIGN_OR_RETURN(TensorId x, node.input(0));
  return node.emit_final(kOp, {x});
}
constexpr char kRelu[] = "Relu", kSigmoid[] = "Sigmoid", kTanh[] = "Tanh", kExp[] = "Exp", kLog[] = "Log",
               kSqrt[] = "Sqrt", kNeg[] = "Neg", kAbs[] = "Abs", kReciprocal[] = "Reciprocal",
               kHardSwish[] = "HardSwish";

Status convert_max_min(NodeView& node, const char* op) {
  if (node.num_inputs() == 1) {
    POCK_ASSIGN_OR_RETURN(TensorId x, node.input(0));
    return node.bind_output(0, x);
  }
  POCK_ASSIGN_OR_RETURN(TensorId acc, node.input(0));
  for (int i = 1; i < node.num_inputs(); ++i) {
    POCK_ASSIGN_OR_RETURN(TensorId b, node.input(i));
    if (i + 1 == node.num_inputs()) return node.emit_final(op, {acc, b});
    POCK_ASSIGN_OR_RETURN(auto out, node.emit(op, {acc, b}, {}, std::to_string(i)));
    acc = out[0];
  }
  return Status::ok();
}
Status convert_max(NodeView& n) { return convert_max_min(n, "Maximum"); }
Status convert_min(NodeView& n) { return convert_max_min(n, "Minimum"); }

Status convert_leaky_relu(NodeView& node) {
  POCK_ASSIGN_OR_RETURN(double alpha, node.attrs().get_float("alpha", 0.01));
  POCK_ASSIGN_OR_RETURN(TensorId x, node.input(0));
  return node.emit_final("LeakyRelu", {x}, Attrs{{"alpha", alpha}});
}

Status convert_gelu(NodeView& node) {  // opset 20, or models that carry it as a custom function
  POCK_ASSIGN_OR_RETURN(std::string approx, node.attrs().get_string("approximate", "none"));
  POCK_ASSIGN_OR_RETURN(TensorId x, node.input(0));
  return node.emit_final("Gelu", {x}, Attrs{{"approximate", approx}});
}

Status convert_identity(NodeView& node);

// Clip with a bound computed at run time (or fed as a graph input): Maximum with the lower
// bound, then Minimum with the upper one; a constant bound stays an attribute of a Clip.
Status convert_clip_runtime_bounds(NodeView& node, std::optional<double> lo, std::optional<double> hi) {
  POCK_ASSIGN_OR_RETURN(TensorId t, node.input(0));
  if (lo || hi) {
    Attrs attrs;
    if (lo) attrs.set("min", *lo);
    if (hi) attrs.set("max", *hi);
    POCK_ASSIGN_OR_RETURN(auto clipped, node.emit("Clip", {t}, attrs, "constant_bounds"));
    t = clipped[0];
  }
  const bool has_hi = node.has_input(2) && !hi;
  if (node.has_input(1) && !lo) {
    POCK_ASSIGN_OR_RETURN(TensorId bound, node.input(1));
    if (!has_hi) return node.emit_final("Maximum", {t, bound});
    POCK_ASSIGN_OR_RETURN(auto low, node.emit("Maximum", {t, bound}, Attrs{}, "lower_bound"));
    t = low[0];
  }
  POCK_ASSIGN_OR_RETURN(TensorId bound, node.input(2));
  return node.emit_final("Minimum", {t, bound});
}

// Clip: bounds are inputs since opset 11 (attributes before). [0, 6] is Relu6, [0, inf) Relu.
Status convert_clip(NodeView& node) {
  // Integers (opset 12+) have no Clip kernel: no bound is a copy, a bound a Maximum / Minimum.
  if (!is_float(node.value(0).dtype)) {
    if (node.has_input(1) || node.has_input(2)) return convert_clip_runtime_bounds(node, std::nullopt, std::nullopt);
    return convert_identity(node);
  }
  std::optional<double> lo, hi;
  bool runtime_bound = false;
  for (int i = 1; i <= 2; ++i) {
    if (!node.has_input(i)) continue;
    if (auto v = node.scalar_input(i)) {
      (i == 1 ? lo : hi) = *v;
      continue;
    }
    if (node.input_is_constant(i) || numel(node.value(i).shape) != 1) {
      return node.input_error(i, "(a bound) must be a scalar");
    }
    runtime_bound = true;
  }
  if (!node.has_input(1) && node.attrs().has("min")) { POCK_ASSIGN_OR_RETURN(lo, node.attrs().get_float("min", 0)); }
  if (!node.has_input(2) && node.attrs().has("max")) { POCK_ASSIGN_OR_RETURN(hi, node.attrs().get_float("max", 0)); }
  if (runtime_bound) return convert_clip_runtime_bounds(node, lo, hi);
  POCK_ASSIGN_OR_RETURN(TensorId x, node.input(0));
  if (lo && *lo == 0.0 && hi && *hi == 6.0) return node.emit_final("Relu6", {x});
  if (lo && *lo == 0.0 && !hi) return node.emit_final("Relu", {x});
  Attrs attrs;
  if (lo) attrs.set("min", *lo);
  if (hi) attrs.set("max", *hi);
  return node.emit_final("Clip", {x}, attrs);
}

// ONNX HardSigmoid = clamp(alpha x + beta, 0, 1); pock's HardSigmoid is PyTorch's (1/6, 1/2).
Status convert_hard_sigmoid(NodeView& node) {
  POCK_ASSIGN_OR_RETURN(double alpha, node.attrs().get_float("alpha", 0.2));
  POCK_ASSIGN_OR_RETURN(double beta, node.attrs().get_float("beta", 0.5));
  POCK_ASSIGN_OR_RETURN(TensorId x, node.input(0));
  if (near(alpha, 1.0 / 6.0) && near(beta, 0.5)) return node.emit_final("HardSigmoid", {x});
  POCK_ASSIGN_OR_RETURN(auto affine, node.emit("ScaleShift", {x}, Attrs{{"alpha", alpha}, {"beta", beta}}, "affine"));
  return node.emit_final("Clip", {affine[0]}, Attrs{{"min", 0.0}, {"max", 1.0}});
}

Status convert_identity(NodeView& node) {
  POCK_ASSIGN_OR_RETURN(TensorId x, node.input(0));
  return node.bind_output(0, x);
}

Status convert_cast(NodeView& node) {
  POCK_ASSIGN_OR_RETURN(int64_t to, node.attrs().get_int("to", 0));
  POCK_ASSIGN_OR_RETURN(DType dt, fold::onnx_dtype(node, to));
  POCK_ASSIGN_OR_RETURN(TensorId x, node.input(0));
  if (node.ctx().graph.tensor(x).dtype == dt) return node.bind_output(0, x);
  return node.emit_final("Cast", {x}, Attrs{{"to", std::string(dtype_name(dt))}});
}

// Dropout keeps its ratio; the compiler turns it into DropoutTrain in the train function. The
// mask output has its inference meaning (all true) when ONNX runs the node in inference mode;
// with training_mode true it is random, and pock's dropout RNG is not the exporter's, so a model
// that reads it is refused.
Status convert_dropout(NodeView& node) {
  double ratio = 0.5;
  if (node.has_input(1)) {
    POCK_ASSIGN_OR_RETURN(ratio, node.const_scalar(1, "ratio"));
  } else {
    POCK_ASSIGN_OR_RETURN(ratio, node.attrs().get_float("ratio", 0.5));
  }
  if (node.output_used(1)) {
    double training = 0;
    if (node.has_input(2)) {
      POCK_ASSIGN_OR_RETURN(training, node.const_scalar(2, "training_mode"));
    }
    if (training != 0 && ratio != 0) {
      return node.unsupported("output 1 (the mask) is read by the model, and training_mode is true: the mask is "
                              "random, and pock's dropout draws other numbers than the exporter's runtime");
    }
    HostTensor mask = HostTensor::zeros(DType::kBool, node.value(0).shape);
    std::fill(mask.i.begin(), mask.i.end(), 1);
    node.bind_constant(1, std::move(mask));
  }
  POCK_ASSIGN_OR_RETURN(TensorId x, node.input(0));
  if (ratio == 0.0) return node.bind_output(0, x);
  return node.emit_final("Dropout", {x}, Attrs{{"ratio", ratio}});
}

// The weight W when `name` is Transpose(W) of a 2-D weight with perm [1, 0]: that is how PyTorch
// exports a Linear without constant folding, and pock's Linear takes W in that layout directly.
std::optional<std::string> transposed_weight(NodeView& node, const std::string& name) {
  ImportContext& ctx = node.ctx();
  const int p = ctx.producer_of(name);
  if (p < 0) return std::nullopt;
  const auto& t = ctx.proto.node(p);
  if (t.op_type() != "Transpose" || t.input_size() != 1) return std::nullopt;
  const Value* w = ctx.find(t.input(0));
  if (!w || !w->is_weight || w->shape.size() != 2) return std::nullopt;
  NodeAttrs attrs(t, "");
  auto perm = attrs.get_ints("perm", {1, 0});
  if (!perm.is_ok() || perm.value() != std::vector<int64_t>{1, 0}) return std::nullopt;
  return t.input(0);
}

// The Add that PyTorch writes after MatMul for a Linear's bias: its index and the bias name,
// when the bias is a [N] weight and nothing else reads the product.
std::optional<std::pair<int, std::string>> bias_add(NodeView& node, int64_t n) {
  ImportContext& ctx = node.ctx();
  const std::string& product = node.proto().output(0);
  const auto& users = ctx.consumers(product);
  if (users.size() != 1 || ctx.is_graph_output(product) || ctx.handled(users[0])) return std::nullopt;
  const auto& add = ctx.proto.node(users[0]);
  if (add.op_type() != "Add" || add.input_size() != 2 || add.output_size() < 1 || add.output(0).empty()) return std::nullopt;
  const std::string& bias = add.input(0) == product ? add.input(1) : add.input(0);
  const Value* b = ctx.find(bias);
  if (!b || !b->is_weight || b->shape != Shape{n} || bias == product) return std::nullopt;
  return std::make_pair(users[0], bias);
}

// Rank-1 operands are promoted like numpy and the added dim removed again.
Status convert_matmul(NodeView& node) {
  const Shape& sa = node.value(0).shape;
  const Shape& sb = node.value(1).shape;
  if (sa.size() >= 1 && sb.size() == 2) {
    if (auto w = transposed_weight(node, node.input_name(1))) {
      POCK_ASSIGN_OR_RETURN(TensorId x, node.input(0));
      POCK_ASSIGN_OR_RETURN(TensorId wt, node.ctx().materialize(*w));
      if (auto bias = bias_add(node, sb[1])) {  // x W^T + b: one Linear with its bias
        POCK_ASSIGN_OR_RETURN(TensorId b, node.ctx().materialize(bias->second));
        POCK_ASSIGN_OR_RETURN(auto y, node.emit("Linear", {x, wt, b}, {}, "linear"));
        NodeView add(node.ctx(), bias->first);
        POCK_RETURN_IF_ERROR(add.bind_output(0, y[0]));
        node.ctx().mark_handled(bias->first);
        return node.bind_output(0, y[0]);
      }
      return node.emit_final("Linear", {x, wt});
    }
  }
  POCK_ASSIGN_OR_RETURN(TensorId a, node.input(0));
  POCK_ASSIGN_OR_RETURN(TensorId b, node.input(1));
  if (sa.size() >= 2 && sb.size() >= 2) return node.emit_final("MatMul", {a, b});
  if (sa.empty() || sb.empty()) return node.error("operands must have rank >= 1");
  if (sa.size() == 1) {
    POCK_ASSIGN_OR_RETURN(auto r, node.emit("Unsqueeze", {a}, Attrs{{"axes", std::vector<int64_t>{0}}}, "promote_a"));
    a = r[0];
  }
  if (sb.size() == 1) {
    POCK_ASSIGN_OR_RETURN(auto r, node.emit("Unsqueeze", {b}, Attrs{{"axes", std::vector<int64_t>{1}}}, "promote_b"));
    b = r[0];
  }
  POCK_ASSIGN_OR_RETURN(auto y, node.emit("MatMul", {a, b}));
  std::vector<int64_t> drop;
  const int64_t rank = static_cast<int64_t>(node.ctx().graph.tensor(y[0]).shape.size());
  if (sa.size() == 1) drop.push_back(rank - 2);
  if (sb.size() == 1) drop.push_back(rank - 1);
  return node.emit_final("Squeeze", {y[0]}, Attrs{{"axes", drop}});
}

// Gemm: alpha * A' B' + beta * C. The PyTorch Linear form (transB = 1, no scaling, C = [N]) is
// pock's Linear; anything else is MatMul with transposes plus scaling and a broadcast add.
Status convert_gemm(NodeView& node) {
  const NodeAttrs& at = node.attrs();
  POCK_ASSIGN_OR_RETURN(double alpha, at.get_float("alpha", 1.0));
  POCK_ASSIGN_OR_RETURN(double beta, at.get_float("beta", 1.0));
  POCK_ASSIGN_OR_RETURN(int64_t trans_a, at.get_int("transA", 0));
  POCK_ASSIGN_OR_RETURN(int64_t trans_b, at.get_int("transB", 0));
  if (node.value(0).shape.size() != 2 || node.value(1).shape.size() != 2) return node.error("A and B must be 2-D");
  const int64_t n = trans_b ? node.value(1).shape[0] : node.value(1).shape[1];
  const bool has_c = node.has_input(2);
  POCK_ASSIGN_OR_RETURN(TensorId a, node.input(0));
  if (!trans_a && trans_b && alpha == 1.0 && beta == 1.0 && (!has_c || node.value(2).shape == Shape{n})) {
    POCK_ASSIGN_OR_RETURN(TensorId w, node.input(1));
    std::vector<TensorId> in{a, w};
    if (has_c) {
      POCK_ASSIGN_OR_RETURN(TensorId c, node.input(2));
      in.push_back(c);
    }
    return node.emit_final("Linear", in);
  }
  POCK_ASSIGN_OR_RETURN(TensorId b, node.input(1));
  POCK_ASSIGN_OR_RETURN(auto y, node.emit("MatMul", {a, b}, Attrs{{"transpose_a", trans_a}, {"transpose_b", trans_b}}, "matmul"));
  TensorId acc = y[0];
  if (alpha != 1.0) {
    POCK_ASSIGN_OR_RETURN(auto s, node.emit("ScaleShift", {acc}, Attrs{{"alpha", alpha}}, "alpha"));
    acc = s[0];
  }
  if (!has_c || beta == 0.0) return node.bind_output(0, acc);
  POCK_ASSIGN_OR_RETURN(TensorId c, node.input(2));
  if (beta != 1.0) {
    POCK_ASSIGN_OR_RETURN(auto s, node.emit("ScaleShift", {c}, Attrs{{"alpha", beta}}, "beta"));
    c = s[0];
  }
  return node.emit_final("Add", {acc, c});
}

// ONNX Mod: fmod = 0 is Python's floored remainder (pock's Mod), fmod = 1 C's fmod (pock's Fmod).
Status convert_mod(NodeView& node) {
  POCK_ASSIGN_OR_RETURN(int64_t fmod, node.attrs().get_int("fmod", 0));
  if (fmod != 0 && fmod != 1) return node.error("fmod must be 0 or 1, got " + std::to_string(fmod));
  POCK_ASSIGN_OR_RETURN(TensorId a, node.input(0));
  POCK_ASSIGN_OR_RETURN(TensorId b, node.input(1));
  return node.emit_final(fmod ? "Fmod" : "Mod", {a, b});
}

}  // namespace

void register_math_converters(std::unordered_map<std::string, Converter>& t) {
  t["Add"] = convert_add;
  t["Sub"] = convert_sub;
  t["Mul"] = convert_mul;
  t["Div"] = convert_div;
  t["Pow"] = convert_pow;
  t["Relu"] = convert_unary<kRelu>;
  t["Sigmoid"] = convert_unary<kSigmoid>;
  t["Tanh"] = convert_unary<kTanh>;
  t["Exp"] = convert_unary<kExp>;
  t["Log"] = convert_unary<kLog>;
  t["Sqrt"] = convert_unary<kSqrt>;
  t["Neg"] = convert_unary<kNeg>;
  t["Abs"] = convert_unary<kAbs>;
  t["Reciprocal"] = convert_unary<kReciprocal>;
  t["HardSwish"] = convert_unary<kHardSwish>;
  t["Max"] = convert_max;
  t["Min"] = convert_min;
  t["LeakyRelu"] = convert_leaky_relu;
  t["Gelu"] = convert_gelu;
  t["Clip"] = convert_clip;
  t["HardSigmoid"] = convert_hard_sigmoid;
  t["Identity"] = convert_identity;
  t["Cast"] = convert_cast;
  t["Dropout"] = convert_dropout;
  t["MatMul"] = convert_matmul;
  t["Gemm"] = convert_gemm;
  t["Mod"] = convert_mod;
}

}  // namespace pock::onnx_import
