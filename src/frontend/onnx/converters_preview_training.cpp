// ONNX's ai.onnx.preview.training optimizers (Adagrad, Adam, Momentum) as elementwise pock ops:
// each is one update formula over (R, T, tensors...), written out below as ONNX's reference
// implementation states it, so every backend runs it with no kernel of its own. pock's own
// training steps (SgdUpdate, AdamUpdate) are not reused: their formulas differ (Adam's alpha and
// beta here are the moment decays, its bias correction is skipped at T = 0, Momentum's first step
// uses coefficient 1 for the gradient).
//
// T, the step count, is known only at run time, so the branches on T > 0 are blends with
// positive = clip(T, 0, 1), which is 0 or 1 on an integer count.
#include <cmath>
#include <string>

#include "frontend/onnx/import_context.hpp"

namespace pock::onnx_import {
namespace {

// Emits single-output ops named after the node.
class Formula {
 public:
  explicit Formula(NodeView& node) : node_(node) {}

  Result<TensorId> op(const std::string& type, std::vector<TensorId> in, Attrs attrs = {}) {
    POCK_ASSIGN_OR_RETURN(auto out, node_.emit(type, std::move(in), std::move(attrs), "f" + std::to_string(count_++)));
    return out[0];
  }
  Result<TensorId> affine(TensorId x, double scale, double shift) {
    return op("ScaleShift", {x}, Attrs{{"alpha", scale}, {"beta", shift}});
  }
  Result<TensorId> clip(TensorId x, double lo, double hi) { return op("Clip", {x}, Attrs{{"min", lo}, {"max", hi}}); }
  // norm_coefficient * x + g: the gradient of the L2 regularization added to g.
  Result<TensorId> regularized(TensorId x, TensorId g, double norm) {
    if (norm == 0.0) return g;
    POCK_ASSIGN_OR_RETURN(TensorId nx, affine(x, norm, 0.0));
    return op("Add", {nx, g});
  }
  // x - rate * num / (sqrt(h) + eps): the step of Adagrad and Adam.
  Result<TensorId> adaptive_step(TensorId x, TensorId rate, TensorId num, TensorId h, double eps) {
    POCK_ASSIGN_OR_RETURN(TensorId root, op("Sqrt", {h}));
    POCK_ASSIGN_OR_RETURN(TensorId scale, affine(root, 1.0, eps));
    POCK_ASSIGN_OR_RETURN(TensorId ratio, op("Div", {num, scale}));
    POCK_ASSIGN_OR_RETURN(TensorId step, op("Mul", {rate, ratio}));
    return op("Sub", {x, step});
  }
  // The step count as f32 (T is int64 in ONNX).
  Result<TensorId> step_count() {
    POCK_ASSIGN_OR_RETURN(TensorId t, node_.input(1));
    if (node_.ctx().graph.tensor(t).dtype == DType::kF32) return t;
    return op("Cast", {t}, Attrs{{"to", std::string("f32")}});
  }

 private:
  NodeView& node_;
  int count_ = 0;
};

// Inputs R, T, then `groups` groups of n tensors each (X..., G..., [V...], [H...]); n is returned.
Result<int> tensors_per_group(NodeView& node, int groups) {
  const int rest = node.num_inputs() - 2;
  if (rest < groups || rest % groups != 0) {
    return node.error("needs R, T and " + std::to_string(groups) + " equal groups of tensors, got " +
                      std::to_string(node.num_inputs()) + " inputs");
  }
  const int n = rest / groups;
  if (node.num_outputs() != n * (groups - 1)) {
    return node.error("has " + std::to_string(node.num_outputs()) + " outputs; " + std::to_string(n) +
                      " optimized tensor(s) need " + std::to_string(n * (groups - 1)));
  }
  for (int i = 0; i < n; ++i) {
    for (int k = 1; k < groups; ++k) {
      if (node.value(2 + k * n + i).shape != node.value(2 + i).shape) {
        return node.input_error(2 + k * n + i, "must have the shape of " + node.input_name(2 + i) + ", " +
                                                  shape_str(node.value(2 + i).shape));
      }
    }
  }
  return n;
}

// The i-th tensor of each of the `groups` groups: X_i, G_i, then V_i and / or H_i.
Result<std::vector<TensorId>> group_member(NodeView& node, int n, int groups, int i) {
  std::vector<TensorId> out;
  for (int k = 0; k < groups; ++k) {
    POCK_ASSIGN_OR_RETURN(TensorId t, node.input(2 + k * n + i));
    out.push_back(t);
  }
  return out;
}

// Adagrad: r = R / (1 + T decay); g' = norm X + G; H' = H + g'²; X' = X - r g' / (sqrt(H') + eps).
Status convert_adagrad(NodeView& node) {
  POCK_ASSIGN_OR_RETURN(int n, tensors_per_group(node, 3));
  POCK_ASSIGN_OR_RETURN(double decay, node.attrs().get_float("decay_factor", 0.0));
  POCK_ASSIGN_OR_RETURN(double eps, node.attrs().get_float("epsilon", 1e-6));
  POCK_ASSIGN_OR_RETURN(double norm, node.attrs().get_float("norm_coefficient", 0.0));
  Formula f(node);
  POCK_ASSIGN_OR_RETURN(TensorId r, node.input(0));
  POCK_ASSIGN_OR_RETURN(TensorId t, f.step_count());
  POCK_ASSIGN_OR_RETURN(TensorId decayed, f.affine(t, decay, 1.0));
  POCK_ASSIGN_OR_RETURN(TensorId rate, f.op("Div", {r, decayed}));
  for (int i = 0; i < n; ++i) {
    POCK_ASSIGN_OR_RETURN(auto in, group_member(node, n, 3, i));
    const TensorId x = in[0], g = in[1], h = in[2];
    POCK_ASSIGN_OR_RETURN(TensorId greg, f.regularized(x, g, norm));
    POCK_ASSIGN_OR_RETURN(TensorId sq, f.op("Square", {greg}));
    POCK_ASSIGN_OR_RETURN(TensorId h_new, f.op("Add", {h, sq}));
    POCK_ASSIGN_OR_RETURN(TensorId x_new, f.adaptive_step(x, rate, greg, h_new, eps));
    POCK_RETURN_IF_ERROR(node.bind_output(i, x_new));
    POCK_RETURN_IF_ERROR(node.bind_output(n + i, h_new));
  }
  return Status::ok();
}

// Momentum: g' = norm X + G; V' = alpha V + beta' g' (beta' = beta, or 1 at T = 0);
// standard X' = X - R V'; nesterov X' = X - R (g' + alpha V').
Status convert_momentum(NodeView& node) {
  POCK_ASSIGN_OR_RETURN(int n, tensors_per_group(node, 3));
  for (const char* required : {"alpha", "beta", "mode", "norm_coefficient"}) {
    if (!node.attrs().has(required)) return node.error(std::string("attribute '") + required + "' is required");
  }
  POCK_ASSIGN_OR_RETURN(double alpha, node.attrs().get_float("alpha", 0));
  POCK_ASSIGN_OR_RETURN(double beta, node.attrs().get_float("beta", 0));
  POCK_ASSIGN_OR_RETURN(double norm, node.attrs().get_float("norm_coefficient", 0));
  POCK_ASSIGN_OR_RETURN(std::string mode, node.attrs().get_string("mode", ""));
  if (mode != "standard" && mode != "nesterov") return node.error("mode must be standard or nesterov, got '" + mode + "'");
  Formula f(node);
  POCK_ASSIGN_OR_RETURN(TensorId r, node.input(0));
  POCK_ASSIGN_OR_RETURN(TensorId t, f.step_count());
  POCK_ASSIGN_OR_RETURN(TensorId positive, f.clip(t, 0.0, 1.0));
  POCK_ASSIGN_OR_RETURN(TensorId beta_t, f.affine(positive, beta - 1.0, 1.0));
  for (int i = 0; i < n; ++i) {
    POCK_ASSIGN_OR_RETURN(auto in, group_member(node, n, 3, i));
    const TensorId x = in[0], g = in[1], v = in[2];
    POCK_ASSIGN_OR_RETURN(TensorId greg, f.regularized(x, g, norm));
    POCK_ASSIGN_OR_RETURN(TensorId kept, f.affine(v, alpha, 0.0));
    POCK_ASSIGN_OR_RETURN(TensorId added, f.op("Mul", {beta_t, greg}));
    POCK_ASSIGN_OR_RETURN(TensorId v_new, f.op("Add", {kept, added}));
    TensorId direction = v_new;
    if (mode == "nesterov") {
      POCK_ASSIGN_OR_RETURN(TensorId ahead, f.affine(v_new, alpha, 0.0));
      POCK_ASSIGN_OR_RETURN(direction, f.op("Add", {greg, ahead}));
    }
    POCK_ASSIGN_OR_RETURN(TensorId step, f.op("Mul", {r, direction}));
    POCK_ASSIGN_OR_RETURN(TensorId x_new, f.op("Sub", {x, step}));
    POCK_RETURN_IF_ERROR(node.bind_output(i, x_new));
    POCK_RETURN_IF_ERROR(node.bind_output(n + i, v_new));
  }
  return Status::ok();
}

// Adam: g' = norm X + G; V' = alpha V + (1 - alpha) g'; H' = beta H + (1 - beta) g'²;
// r = R sqrt(1 - beta^T) / (1 - alpha^T) for T > 0, else R; X' = (1 - norm_post)(X - r V' / (sqrt(H') + eps)).
Status convert_adam(NodeView& node) {
  POCK_ASSIGN_OR_RETURN(int n, tensors_per_group(node, 4));
  POCK_ASSIGN_OR_RETURN(double alpha, node.attrs().get_float("alpha", 0.9));
  POCK_ASSIGN_OR_RETURN(double beta, node.attrs().get_float("beta", 0.999));
  POCK_ASSIGN_OR_RETURN(double eps, node.attrs().get_float("epsilon", 1e-6));
  POCK_ASSIGN_OR_RETURN(double norm, node.attrs().get_float("norm_coefficient", 0.0));
  POCK_ASSIGN_OR_RETURN(double norm_post, node.attrs().get_float("norm_coefficient_post", 0.0));
  Formula f(node);
  POCK_ASSIGN_OR_RETURN(TensorId r, node.input(0));
  POCK_ASSIGN_OR_RETURN(TensorId t, f.step_count());
  // The corrected rate is evaluated at max(T, 1), where it is finite, and chosen only when T > 0.
  POCK_ASSIGN_OR_RETURN(TensorId t1, f.op("Clip", {t}, Attrs{{"min", 1.0}}));
  POCK_ASSIGN_OR_RETURN(TensorId log_beta_t, f.affine(t1, std::log(beta), 0.0));
  POCK_ASSIGN_OR_RETURN(TensorId beta_t, f.op("Exp", {log_beta_t}));
  POCK_ASSIGN_OR_RETURN(TensorId log_alpha_t, f.affine(t1, std::log(alpha), 0.0));
  POCK_ASSIGN_OR_RETURN(TensorId alpha_t, f.op("Exp", {log_alpha_t}));
  POCK_ASSIGN_OR_RETURN(TensorId beta_rest, f.affine(beta_t, -1.0, 1.0));
  POCK_ASSIGN_OR_RETURN(TensorId beta_root, f.op("Sqrt", {beta_rest}));
  POCK_ASSIGN_OR_RETURN(TensorId alpha_rest, f.affine(alpha_t, -1.0, 1.0));
  POCK_ASSIGN_OR_RETURN(TensorId correction, f.op("Div", {beta_root, alpha_rest}));
  POCK_ASSIGN_OR_RETURN(TensorId corrected, f.op("Mul", {r, correction}));
  POCK_ASSIGN_OR_RETURN(TensorId positive, f.clip(t, 0.0, 1.0));
  POCK_ASSIGN_OR_RETURN(TensorId change, f.op("Sub", {corrected, r}));
  POCK_ASSIGN_OR_RETURN(TensorId chosen, f.op("Mul", {positive, change}));
  POCK_ASSIGN_OR_RETURN(TensorId rate, f.op("Add", {r, chosen}));
  for (int i = 0; i < n; ++i) {
    POCK_ASSIGN_OR_RETURN(auto in, group_member(node, n, 4, i));
    const TensorId x = in[0], g = in[1], v = in[2], h = in[3];
    POCK_ASSIGN_OR_RETURN(TensorId greg, f.regularized(x, g, norm));
    POCK_ASSIGN_OR_RETURN(TensorId v_kept, f.affine(v, alpha, 0.0));
    POCK_ASSIGN_OR_RETURN(TensorId v_added, f.affine(greg, 1.0 - alpha, 0.0));
    POCK_ASSIGN_OR_RETURN(TensorId v_new, f.op("Add", {v_kept, v_added}));
    POCK_ASSIGN_OR_RETURN(TensorId sq, f.op("Square", {greg}));
    POCK_ASSIGN_OR_RETURN(TensorId h_kept, f.affine(h, beta, 0.0));
    POCK_ASSIGN_OR_RETURN(TensorId h_added, f.affine(sq, 1.0 - beta, 0.0));
    POCK_ASSIGN_OR_RETURN(TensorId h_new, f.op("Add", {h_kept, h_added}));
    POCK_ASSIGN_OR_RETURN(TensorId x_new, f.adaptive_step(x, rate, v_new, h_new, eps));
    if (norm_post != 0.0) {
      POCK_ASSIGN_OR_RETURN(x_new, f.affine(x_new, 1.0 - norm_post, 0.0));
    }
    POCK_RETURN_IF_ERROR(node.bind_output(i, x_new));
    POCK_RETURN_IF_ERROR(node.bind_output(n + i, v_new));
    POCK_RETURN_IF_ERROR(node.bind_output(2 * n + i, h_new));
  }
  return Status::ok();
}

}  // namespace

void register_preview_training_converters(std::unordered_map<std::string, Converter>& t) {
  t[std::string(kPreviewTrainingDomain) + "::Adagrad"] = convert_adagrad;
  t[std::string(kPreviewTrainingDomain) + "::Adam"] = convert_adam;
  t[std::string(kPreviewTrainingDomain) + "::Momentum"] = convert_momentum;
}

}  // namespace pock::onnx_import
