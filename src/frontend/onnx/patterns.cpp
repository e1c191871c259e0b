// Fusions of the op sequences that exporters write for one PyTorch layer. GELU must be fused
// (pock has no Erf); Silu, HardSwish, LayerNorm and RMSNorm are fused because one pock op is
// faster, saves fewer activations and has an exact gradient rule.
//
// A pattern starts at a node of its first op and looks ahead through single-consumer values only,
// so a fused intermediate is never needed by anything else. Nodes it absorbs are marked handled;
// nodes before it that only fed it die in the importer's final dead-code pass.
#include <cmath>

#include "frontend/onnx/import_context.hpp"

namespace pock::onnx_import {
namespace {

bool near(double a, double b, double tol = 1e-4) { return std::fabs(a - b) <= tol * std::max(1.0, std::fabs(b)); }

struct Matcher {
  ImportContext& ctx;

  const onnx::NodeProto& node(int i) const { return ctx.proto.node(i); }

  // The one node reading `value`, when it is of `op` and the value is no graph output.
  int sole_consumer(const std::string& value, const char* op) const {
    const auto& users = ctx.consumers(value);
    if (users.size() != 1 || ctx.is_graph_output(value) || ctx.handled(users[0])) return -1;
    const auto& n = node(users[0]);
    if (n.op_type() != op || !(n.domain().empty() || n.domain() == "ai.onnx")) return -1;
    if (n.output_size() < 1 || n.output(0).empty()) return -1;  // malformed: left for process() to report
    return users[0];
  }

  // Input `i` of node `n`, "" when absent (malformed files must not index out of range).
  const std::string& input(int n, int i) const {
    static const std::string none;
    return i < node(n).input_size() ? node(n).input(i) : none;
  }

  // For a two-input node, the input that is not `value` ("" when both or neither are).
  std::string other_input(int n, const std::string& value) const {
    const auto& p = node(n);
    if (p.input_size() != 2) return "";
    if (p.input(0) == value && p.input(1) != value) return p.input(1);
    if (p.input(1) == value && p.input(0) != value) return p.input(0);
    return "";
  }

  std::optional<double> scalar(const std::string& value) const {
    Value* v = ctx.find(value);
    const int producer = ctx.producer_of(value);
    if (!v && producer >= 0 && node(producer).op_type() == "Constant" && node(producer).input_size() == 0) {
      // Looking ahead: exporters write a Constant just before its first reader, which may lie
      // past the node where the pattern starts. A Constant reads nothing, so it runs early.
      if (!ctx.process(producer).is_ok()) return std::nullopt;
      ctx.mark_handled(producer);
      v = ctx.find(value);
    }
    if (!v || numel(v->shape) != 1 || !(v->constant || v->initializer) || !is_float(v->dtype)) return std::nullopt;
    auto t = ctx.constant_of(value);
    if (!t.is_ok()) return std::nullopt;
    return t.value()->as_double(0);
  }

  bool is_scalar(const std::string& value, double expected) const {
    auto s = scalar(value);
    return s && near(*s, expected);
  }

  // Axes of a ReduceMean (attribute, or input from opset 18) when they are exactly the last dim.
  bool reduces_last_dim(int n, size_t rank) const {
    const auto& p = node(n);
    NodeAttrs attrs(p, "");
    auto keep = attrs.get_int("keepdims", 1);
    if (!keep.is_ok() || keep.value() != 1) return false;
    std::vector<int64_t> axes;
    if (p.input_size() > 1 && !p.input(1).empty()) {
      auto t = ctx.constant_of(p.input(1));
      if (!t.is_ok()) return false;
      axes = t.value()->ints();
    } else {
      auto a = attrs.get_ints("axes", {});
      if (!a.is_ok()) return false;
      axes = a.value();
    }
    return axes.size() == 1 && (axes[0] == -1 || axes[0] == static_cast<int64_t>(rank) - 1);
  }

  bool is_weight_of_size(const std::string& value, int64_t size) const {
    Value* v = ctx.find(value);
    return v && v->is_weight && v->shape == Shape{size};
  }
};

// x * 0.5 * (1 + erf(x / sqrt(2))) in any association order PyTorch and tf2onnx write.
Result<bool> match_gelu(NodeView& erf) {
  Matcher m{erf.ctx()};
  const std::string& u = erf.input_name(0);
  const int scale = erf.ctx().producer_of(u);
  if (scale < 0 || m.ctx.consumers(u).size() != 1) return false;
  const auto& sp = m.node(scale);
  if (sp.input_size() != 2) return false;
  const std::string x = sp.input(0);
  if ((sp.op_type() == "Div" && m.is_scalar(sp.input(1), std::sqrt(2.0))) ||
      (sp.op_type() == "Mul" && m.is_scalar(sp.input(1), std::sqrt(0.5)))) {
    // x is input 0
  } else {
    return false;
  }
  const int add = m.sole_consumer(erf.proto().output(0), "Add");
  if (add < 0 || !m.is_scalar(m.other_input(add, erf.proto().output(0)), 1.0)) return false;
  const std::string& one_plus = m.node(add).output(0);
  const int mul1 = m.sole_consumer(one_plus, "Mul");
  if (mul1 < 0) return false;
  const std::string y = m.other_input(mul1, one_plus);
  std::vector<int> absorbed{add, mul1};
  int last = mul1;
  if (y == x || m.is_scalar(y, 0.5)) {  // (x * (1 + erf)) * 0.5  or  (0.5 * (1 + erf)) * x
    const int mul2 = m.sole_consumer(m.node(mul1).output(0), "Mul");
    if (mul2 < 0) return false;
    const std::string z = m.other_input(mul2, m.node(mul1).output(0));
    if (!(y == x ? m.is_scalar(z, 0.5) : z == x)) return false;
    absorbed.push_back(mul2);
    last = mul2;
  } else {  // (x * 0.5) * (1 + erf)
    const int half = m.ctx.producer_of(y);
    if (half < 0 || m.node(half).op_type() != "Mul" || m.other_input(half, x) == "" ||
        !m.is_scalar(m.other_input(half, x), 0.5)) {
      return false;
    }
  }
  POCK_ASSIGN_OR_RETURN(TensorId xt, m.ctx.materialize(x));
  NodeView final_node(m.ctx, last);
  POCK_ASSIGN_OR_RETURN(auto out, erf.emit("Gelu", {xt}, Attrs{{"approximate", std::string("none")}}, "gelu"));
  POCK_RETURN_IF_ERROR(final_node.bind_output(0, out[0]));
  for (int n : absorbed) m.ctx.mark_handled(n);
  return true;
}

// x * sigmoid(x) -> Silu;  x * HardSigmoid(x) (PyTorch alpha 1/6) -> HardSwish.
Result<bool> match_gated(NodeView& gate, const char* fused) {
  Matcher m{gate.ctx()};
  const std::string& x = gate.input_name(0);
  if (gate.op() == "HardSigmoid") {
    auto alpha = gate.attrs().get_float("alpha", 0.2);
    auto beta = gate.attrs().get_float("beta", 0.5);
    if (!alpha.is_ok() || !beta.is_ok() || !near(alpha.value(), 1.0 / 6.0, 1e-6) || beta.value() != 0.5) return false;
  }
  const int mul = m.sole_consumer(gate.proto().output(0), "Mul");
  if (mul < 0 || m.other_input(mul, gate.proto().output(0)) != x) return false;
  POCK_ASSIGN_OR_RETURN(TensorId xt, m.ctx.materialize(x));
  NodeView final_node(m.ctx, mul);
  POCK_ASSIGN_OR_RETURN(auto out, gate.emit(fused, {xt}, {}, "fused"));
  POCK_RETURN_IF_ERROR(final_node.bind_output(0, out[0]));
  m.ctx.mark_handled(mul);
  return true;
}
Result<bool> match_silu(NodeView& n) { return match_gated(n, "Silu"); }
Result<bool> match_hard_swish(NodeView& n) { return match_gated(n, "HardSwish"); }

// Follows Add(eps) -> Sqrt -> (Reciprocal | Div(1, .)) or Div(x, .) from a mean of squares.
// On success `normalized` is the node whose output is x / sqrt(mean + eps).
bool match_inv_sqrt_tail(const Matcher& m, int mean, const std::string& x, double* eps, int* normalized,
                         std::vector<int>* absorbed) {
  const std::string& ms = m.node(mean).output(0);
  const int add = m.sole_consumer(ms, "Add");
  if (add < 0) return false;
  auto e = m.scalar(m.other_input(add, ms));
  if (!e) return false;
  *eps = *e;
  const int sqrt = m.sole_consumer(m.node(add).output(0), "Sqrt");
  if (sqrt < 0) return false;
  const std::string& root = m.node(sqrt).output(0);
  absorbed->insert(absorbed->end(), {add, sqrt});
  const auto& users = m.ctx.consumers(root);
  if (users.size() != 1 || m.ctx.is_graph_output(root)) return false;
  const auto& u = m.node(users[0]);
  if (u.op_type() == "Div" && u.input_size() == 2 && u.input(0) == x && u.input(1) == root) {
    *normalized = users[0];
    absorbed->push_back(users[0]);
    return true;
  }
  int inv = -1;
  if (u.output_size() < 1 || u.output(0).empty()) return false;
  if (u.op_type() == "Reciprocal") inv = users[0];
  if (u.op_type() == "Div" && u.input_size() == 2 && u.input(1) == root && m.is_scalar(u.input(0), 1.0)) inv = users[0];
  if (inv < 0) return false;
  const int mul = m.sole_consumer(m.node(inv).output(0), "Mul");
  if (mul < 0 || m.other_input(mul, m.node(inv).output(0)) != x) return false;
  absorbed->insert(absorbed->end(), {inv, mul});
  *normalized = mul;
  return true;
}

// Optional "* gamma" (and "+ beta") after a normalization, with 1-D weights over the last dim.
int match_affine(const Matcher& m, int node, const char* op, int64_t dim, std::string* weight) {
  const std::string& y = m.node(node).output(0);
  const int next = m.sole_consumer(y, op);
  if (next < 0) return -1;
  const std::string w = m.other_input(next, y);
  if (!m.is_weight_of_size(w, dim)) return -1;
  *weight = w;
  return next;
}

// x * rsqrt(mean(x^2, -1) + eps) [* gamma]: LLaMA's RMSNorm as PyTorch exports it.
Result<bool> match_rms_norm(NodeView& pow) {
  Matcher m{pow.ctx()};
  if (!m.is_scalar(pow.input_name(1), 2.0)) return false;
  const std::string& x = pow.input_name(0);
  const Value* xv = m.ctx.find(x);
  if (!xv || xv->shape.empty() || !is_float(xv->dtype)) return false;
  const int mean = m.sole_consumer(pow.proto().output(0), "ReduceMean");
  if (mean < 0 || !m.reduces_last_dim(mean, xv->shape.size())) return false;
  double eps = 0;
  int normalized = -1;
  std::vector<int> absorbed{mean};
  if (!match_inv_sqrt_tail(m, mean, x, &eps, &normalized, &absorbed)) return false;
  std::string gamma;
  int last = normalized;
  if (const int scaled = match_affine(m, normalized, "Mul", xv->shape.back(), &gamma); scaled >= 0) {
    absorbed.push_back(scaled);
    last = scaled;
  }
  POCK_ASSIGN_OR_RETURN(TensorId xt, m.ctx.materialize(x));
  std::vector<TensorId> in{xt};
  if (!gamma.empty()) {
    POCK_ASSIGN_OR_RETURN(TensorId g, m.ctx.materialize(gamma));
    in.push_back(g);
  }
  POCK_ASSIGN_OR_RETURN(auto out, pow.emit("RMSNorm", in, Attrs{{"axis", int64_t{-1}}, {"eps", eps}}, "rms_norm"));
  NodeView final_node(m.ctx, last);
  POCK_RETURN_IF_ERROR(final_node.bind_output(0, out[0]));
  for (int n : absorbed) m.ctx.mark_handled(n);
  return true;
}

// (x - mean(x)) / sqrt(mean((x - mean(x))^2) + eps) [* gamma [+ beta]]: LayerNorm before opset 17.
Result<bool> match_layer_norm(NodeView& mean1) {
  Matcher m{mean1.ctx()};
  const std::string& x = mean1.input_name(0);
  const Value* xv = m.ctx.find(x);
  if (!xv || xv->shape.empty() || !is_float(xv->dtype) || !m.reduces_last_dim(mean1.index(), xv->shape.size())) return false;
  const int sub = m.sole_consumer(mean1.proto().output(0), "Sub");
  if (sub < 0 || m.input(sub, 0) != x) return false;
  const std::string& d = m.node(sub).output(0);
  const auto& users = m.ctx.consumers(d);
  if (users.size() != 2 || m.ctx.is_graph_output(d)) return false;
  int square = -1;
  for (int u : users) {
    const auto& p = m.node(u);
    if (p.op_type() == "Pow" && m.input(u, 0) == d && m.is_scalar(m.input(u, 1), 2.0)) square = u;
    if (p.op_type() == "Mul" && p.input_size() == 2 && p.input(0) == d && p.input(1) == d) square = u;
  }
  if (square < 0) return false;
  const int mean2 = m.sole_consumer(m.node(square).output(0), "ReduceMean");
  if (mean2 < 0 || !m.reduces_last_dim(mean2, xv->shape.size())) return false;
  double eps = 0;
  int normalized = -1;
  std::vector<int> absorbed{sub, square, mean2};
  if (!match_inv_sqrt_tail(m, mean2, d, &eps, &normalized, &absorbed)) return false;
  std::string gamma, beta;
  int last = normalized;
  if (const int scaled = match_affine(m, normalized, "Mul", xv->shape.back(), &gamma); scaled >= 0) {
    absorbed.push_back(scaled);
    last = scaled;
    if (const int shifted = match_affine(m, scaled, "Add", xv->shape.back(), &beta); shifted >= 0) {
      absorbed.push_back(shifted);
      last = shifted;
    }
  }
  POCK_ASSIGN_OR_RETURN(TensorId xt, m.ctx.materialize(x));
  std::vector<TensorId> in{xt};
  if (!gamma.empty()) {
    POCK_ASSIGN_OR_RETURN(TensorId g, m.ctx.materialize(gamma));
    in.push_back(g);
  }
  if (!beta.empty()) {
    POCK_ASSIGN_OR_RETURN(TensorId b, m.ctx.materialize(beta));
    in.push_back(b);
  }
  POCK_ASSIGN_OR_RETURN(auto out, mean1.emit("LayerNorm", in, Attrs{{"axis", int64_t{-1}}, {"eps", eps}}, "layer_norm"));
  NodeView final_node(m.ctx, last);
  POCK_RETURN_IF_ERROR(final_node.bind_output(0, out[0]));
  for (int n : absorbed) m.ctx.mark_handled(n);
  return true;
}

}  // namespace

void register_patterns(std::unordered_map<std::string, Pattern>& t) {
  t["Erf"] = match_gelu;
  t["Sigmoid"] = match_silu;
  t["HardSigmoid"] = match_hard_swish;
  t["Pow"] = match_rms_norm;
  t["ReduceMean"] = match_layer_norm;
}

}  // namespace pock::onnx_import
