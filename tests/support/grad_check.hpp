// Test support: checks an op's compiled gradients against central finite differences.
//
//   auto report = check_op_gradients("Conv2d", {x, w, b}, attrs, {true, true, true});
//   CHECK(report);   // on failure Catch prints the report: which input, element, values
//
// How: a graph with one node of `op`. Differentiable inputs become trainable parameters "p<i>",
// the others constants (kState for inputs the op mutates in place). The loss is
//   L = sum_k sum(y_k * r_k)
// over the op's float outputs y_k with fixed random weights r_k, so every output element matters.
// The graph is compiled with a recipe (loss "output", SGD with lr 0 so the weights stay, gradients
// exposed as "p<i>.grad"), one train step gives the analytic gradients, and each element of each
// differentiable input is perturbed by +-h and the inference function re-run: the numeric
// gradient is (L(+h) - L(-h)) / 2h, with L summed in double on the host.
//
// Tolerance: |analytic - numeric| <= atol + rtol * max(|analytic|, |numeric|), where atol adds
// to options.atol the worst-case effect of float rounding on the difference quotient:
// 4 * 2^-24 * S / h, S = sum |y_k * r_k| (each output element may be off by half an ulp at both
// points). rtol covers the O(h^2) truncation error of central differences. Inputs should keep a
// distance > h from kinks (ReLU at 0, ties of max, clamp bounds), where differences are meaningless.
//
// The op is differentiated as the train function sees it: ops that the train lowering rewrites
// (Dropout -> DropoutTrain; BatchNorm -> BatchNormTrain when gamma or beta trains) should be
// checked in their train form.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstring>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

#include "ir/op_schema.hpp"
#include "pock/compiler/compiler.hpp"
#include "pock/engine.hpp"
#include "support/op_runner.hpp"

namespace pock::test {

struct GradCheckOptions {
  double step = 1e-2;   // h: central-difference step, in the input's units
  double rtol = 1e-2;
  double atol = 1e-4;
  uint32_t seed = 7;    // for the output weights r_k
  std::vector<bool> omitted;          // inputs passed as kNoTensor (optional inputs in the middle)
  std::vector<int> loss_outputs;      // outputs in the loss; empty = every float output
  int max_reported = 5;               // mismatches listed in the message
};

struct GradCheckReport {
  bool ok = false;
  std::string message;   // empty when ok
  double max_abs_error = 0.0;
  int64_t checked = 0;   // gradient elements compared
  explicit operator bool() const { return ok; }
};

inline std::ostream& operator<<(std::ostream& os, const GradCheckReport& r) {
  os << (r.ok ? "gradients match" : "gradient check failed") << " (" << r.checked << " elements, max |error| "
     << r.max_abs_error << ")";
  if (!r.message.empty()) os << ": " << r.message;
  return os;
}

namespace grad_check_detail {

inline GradCheckReport fail(const std::string& what) {
  GradCheckReport r;
  r.message = what;
  return r;
}

inline std::vector<uint8_t> f32_bytes(const std::vector<float>& v) {
  std::vector<uint8_t> b(v.size() * sizeof(float));
  if (!b.empty()) std::memcpy(b.data(), v.data(), b.size());
  return b;
}

struct Built {
  Graph graph;
  std::vector<std::string> outputs;              // names of the outputs in the loss
  std::vector<std::vector<float>> weights;       // r_k
};

inline Result<Built> build(const std::string& op, const std::vector<HostTensor>& inputs, const Attrs& attrs,
                           const std::vector<bool>& differentiable, const GradCheckOptions& o) {
  Built b;
  Graph& g = b.graph;
  const OpSchema* schema = SchemaRegistry::global().find(op);
  auto mutated = [&](size_t i) {
    if (!schema) return false;
    for (int m : schema->mutated_inputs) if (m == static_cast<int>(i)) return true;
    return false;
  };
  std::vector<TensorId> ids;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const HostTensor& t = inputs[i];
    if (i < o.omitted.size() && o.omitted[i]) {
      ids.push_back(kNoTensor);
      continue;
    }
    const bool diff = i < differentiable.size() && differentiable[i];
    if (diff && t.dtype != DType::kF32) return Status(Code::kInvalidArgument, "input " + std::to_string(i) + " is not f32");
    if (diff) {
      ids.push_back(g.add_parameter("p" + std::to_string(i), t.dtype, t.shape, t.bytes));
    } else if (mutated(i)) {
      TensorDesc d;
      d.name = "s" + std::to_string(i);
      d.dtype = t.dtype;
      d.shape = t.shape;
      d.kind = TensorKind::kState;
      d.data = std::make_shared<const std::vector<uint8_t>>(t.bytes);
      ids.push_back(g.add_tensor(std::move(d)));
    } else {
      ids.push_back(g.add_constant("c" + std::to_string(i), t.dtype, t.shape, t.bytes));
    }
  }
  auto outs = g.add_node(op, ids, attrs, "node");
  if (!outs.is_ok()) return outs.status();
  TensorId total = kNoTensor;
  for (size_t k = 0; k < outs->size(); ++k) {
    const TensorId y = (*outs)[k];
    const bool listed = o.loss_outputs.empty()
                            ? g.tensor(y).dtype == DType::kF32
                            : std::find(o.loss_outputs.begin(), o.loss_outputs.end(), static_cast<int>(k)) != o.loss_outputs.end();
    if (!listed) continue;
    const std::string name = "y" + std::to_string(k);
    POCK_RETURN_IF_ERROR(g.mark_output(y, name));
    const Shape shape = g.tensor(y).shape;
    b.weights.push_back(random_floats(static_cast<size_t>(numel(shape)), o.seed + static_cast<uint32_t>(k)));
    b.outputs.push_back(name);
    const TensorId r = g.add_constant("r" + std::to_string(k), DType::kF32, shape, f32_bytes(b.weights.back()));
    POCK_ASSIGN_OR_RETURN(std::vector<TensorId> prod, g.add_node("Mul", {y, r}));
    POCK_ASSIGN_OR_RETURN(std::vector<TensorId> sum, g.add_node("ReduceSum", {prod[0]}, Attrs{{"keepdims", int64_t{0}}}));
    if (total == kNoTensor) {
      total = sum[0];
    } else {
      POCK_ASSIGN_OR_RETURN(std::vector<TensorId> acc, g.add_node("Add", {total, sum[0]}));
      total = acc[0];
    }
  }
  if (total == kNoTensor) return Status(Code::kInvalidArgument, op + " has no float output to check");
  POCK_RETURN_IF_ERROR(g.mark_output(total, "loss"));
  return b;
}

// L = sum_k sum(y_k * r_k) in double from the inference outputs; `magnitude` gets sum |y_k r_k|.
inline Result<double> host_loss(Engine& e, const Built& b, double* magnitude = nullptr) {
  double loss = 0.0, mag = 0.0;
  for (size_t k = 0; k < b.outputs.size(); ++k) {
    auto y = e.output<float>(b.outputs[k]);
    if (!y.is_ok()) return y.status();
    for (size_t i = 0; i < y->size(); ++i) {
      const double term = static_cast<double>((*y)[i]) * b.weights[k][i];
      loss += term;
      mag += std::fabs(term);
    }
  }
  if (magnitude) *magnitude = mag;
  return loss;
}

}  // namespace grad_check_detail

inline GradCheckReport check_op_gradients(const std::string& op, const std::vector<HostTensor>& inputs, const Attrs& attrs,
                                          const std::vector<bool>& differentiable, const GradCheckOptions& options = {}) {
  using namespace grad_check_detail;
  auto built = build(op, inputs, attrs, differentiable, options);
  if (!built.is_ok()) return fail("building the graph: " + built.status().to_string());
  Recipe recipe;
  recipe.loss.type = "output";
  recipe.loss.logits = "loss";
  recipe.optimizer.type = "sgd";
  recipe.optimizer.lr = 0.0;              // the train step leaves the weights where they are
  recipe.freeze_batchnorm_stats = true;   // BatchNorm with frozen gamma/beta stays in inference form
  CompileOptions copts;
  copts.expose_gradients = true;
  auto blob = compile(built->graph, &recipe, copts);
  if (!blob.is_ok()) return fail("compiling: " + blob.status().to_string());
  auto engine = Engine::open_buffer(blob->data(), blob->size());
  if (!engine.is_ok()) return fail("loading: " + engine.status().to_string());
  Engine& e = engine.value();
  auto trained = e.train_step();
  if (!trained.is_ok()) return fail("train step: " + trained.status().to_string());

  Status s = e.infer();
  if (!s.is_ok()) return fail("infer: " + s.to_string());
  double magnitude = 0.0;
  auto base = host_loss(e, built.value(), &magnitude);
  if (!base.is_ok()) return fail("reading outputs: " + base.status().to_string());
  const double h = options.step;
  const double atol = options.atol + 4.0 * std::ldexp(1.0, -24) * magnitude / h;

  GradCheckReport report;
  report.ok = true;
  std::ostringstream mismatches;
  int reported = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const bool diff = i < differentiable.size() && differentiable[i] && !(i < options.omitted.size() && options.omitted[i]);
    if (!diff) continue;
    const std::string name = "p" + std::to_string(i);
    std::vector<float> values = inputs[i].f32();
    std::vector<float> analytic(values.size(), 0.0f);
    auto grad = e.output<float>(name + ".grad");
    const bool has_grad = grad.is_ok();
    if (has_grad) analytic = grad.value();
    for (size_t j = 0; j < values.size(); ++j) {
      const float original = values[j];
      double at[2];
      for (int side = 0; side < 2; ++side) {
        values[j] = static_cast<float>(original + (side == 0 ? h : -h));
        s = e.set_parameter(name, values.data(), values.size() * sizeof(float));
        if (s.is_ok()) s = e.infer();
        if (!s.is_ok()) return fail("perturbed run of " + name + ": " + s.to_string());
        auto l = host_loss(e, built.value());
        if (!l.is_ok()) return fail(l.status().to_string());
        at[side] = l.value();
      }
      values[j] = original;
      // The step actually taken in float, so that a rounded perturbation does not bias the quotient.
      const double taken = static_cast<double>(static_cast<float>(original + h)) - static_cast<float>(original - h);
      const double numeric = (at[0] - at[1]) / taken;
      const double err = std::fabs(numeric - analytic[j]);
      const double tol = atol + options.rtol * std::fmax(std::fabs(numeric), std::fabs(static_cast<double>(analytic[j])));
      report.max_abs_error = std::fmax(report.max_abs_error, err);
      ++report.checked;
      if (err > tol || !std::isfinite(analytic[j])) {
        report.ok = false;
        if (reported++ < options.max_reported) {
          mismatches << "\n  " << op << " input " << i << " element " << j << ": analytic "
                     << (has_grad ? std::to_string(analytic[j]) : std::string("(no gradient)")) << ", numeric " << numeric
                     << ", tolerance " << tol;
        }
      }
    }
    s = e.set_parameter(name, values.data(), values.size() * sizeof(float));
    if (!s.is_ok()) return fail(s.to_string());
  }
  if (!report.ok) report.message = std::to_string(reported) + " mismatching elements (h = " + std::to_string(h) + ")" + mismatches.str();
  return report;
}

}  // namespace pock::test
