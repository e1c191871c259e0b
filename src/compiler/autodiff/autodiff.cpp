#include "compiler/autodiff/autodiff.hpp"

#include <cstring>

#include "compiler/autodiff/grad_rule.hpp"
#include "compiler/sparse/partial_channels.hpp"

namespace pock {
namespace {

// Tensors that depend on some `wrt` tensor through float data (integer tensors carry no gradient).
std::vector<bool> depends_on_wrt(const Graph& g, const std::vector<Node>& forward, const std::vector<TensorId>& wrt) {
  std::vector<bool> dep(g.num_tensors(), false);
  for (TensorId id : wrt) dep[id] = is_float(g.tensor(id).dtype);
  for (const Node& n : forward) {
    bool any = false;
    for (TensorId in : n.inputs) any = any || (in != kNoTensor && dep[in]);
    if (!any) continue;
    for (TensorId out : n.outputs) dep[out] = is_float(g.tensor(out).dtype);
  }
  return dep;
}

// Tensors from which the loss can be reached.
std::vector<bool> reaches_loss(const Graph& g, const std::vector<Node>& forward, TensorId loss) {
  std::vector<bool> reach(g.num_tensors(), false);
  reach[loss] = true;
  for (size_t k = forward.size(); k-- > 0;) {
    const Node& n = forward[k];
    bool any = false;
    for (TensorId out : n.outputs) any = any || reach[out];
    if (!any) continue;
    for (TensorId in : n.inputs) {
      if (in != kNoTensor) reach[in] = true;
    }
  }
  return reach;
}

TensorId add_constant_scalar_like(Graph& g, TensorId like, float value) {
  const TensorDesc& d = g.tensor(like);
  std::vector<uint8_t> bytes(static_cast<size_t>(numel(d.shape)) * sizeof(float));
  for (size_t i = 0; i < bytes.size(); i += sizeof(float)) std::memcpy(bytes.data() + i, &value, sizeof(float));
  return g.add_constant(g.unique_name(d.name + "/grad_seed"), DType::kF32, d.shape, std::move(bytes));
}

// A parameter under a partial-channel update gets the gradient of its leading rows only: a rule
// that produced the full gradient has it sliced here (rules for Conv2d, Linear and MatMul emit
// the cheaper [k, ...] computation themselves).
Result<TensorId> keep_trained_rows(Graph& g, std::vector<Node>& backward, const Node& n, size_t i, TensorId dx) {
  const TensorDesc& x = g.tensor(n.inputs[i]);
  const int64_t rows = trained_rows(x);
  if (rows < 0 || g.tensor(dx).shape != x.shape) return dx;
  auto slice = g.create_node("Slice", {dx}, leading_slice_attrs(rows, 0), g.unique_name(x.name + "/grad_rows"));
  if (!slice.is_ok()) return slice.status();
  slice->phase = Phase::kBackward;
  const TensorId out = slice->outputs[0];
  backward.push_back(std::move(slice.value()));
  return out;
}

Status check_gradient(const Graph& g, const Node& n, size_t i, TensorId dx) {
  const TensorDesc& x = g.tensor(n.inputs[i]);
  const TensorDesc& d = g.tensor(dx);
  if (trained_shape(x) == d.shape && x.dtype == d.dtype) return Status::ok();
  return Status(Code::kInternal, "gradient rule of " + n.op + " '" + n.name + "' gives input " + std::to_string(i) + " ('" +
                                     x.name + "', " + dtype_name(x.dtype) + shape_str(trained_shape(x)) + ") a gradient of " +
                                     dtype_name(d.dtype) + shape_str(d.shape));
}

// Puts each forward node's saved forms (GradContext::emit_forward1) right after it.
void insert_saved_forms(std::vector<Node>& forward, std::vector<std::vector<Node>>& after) {
  size_t added = 0;
  for (const std::vector<Node>& a : after) added += a.size();
  if (added == 0) return;
  std::vector<Node> merged;
  merged.reserve(forward.size() + added);
  for (size_t k = 0; k < forward.size(); ++k) {
    merged.push_back(std::move(forward[k]));
    for (Node& n : after[k]) merged.push_back(std::move(n));
  }
  forward = std::move(merged);
}

// Gradients flow in f32, f16 and bf16 only: a trained value that passes through f64 on its way to
// the loss (a Cast to f64 and back) is refused, naming the op, rather than differentiated in f64.
template <typename NeedsGrad>
Status refuse_f64_gradients(const Graph& g, const std::vector<Node>& forward, NeedsGrad needs_grad) {
  for (const Node& n : forward) {
    for (TensorId out : n.outputs) {
      if (!needs_grad(out) || g.tensor(out).dtype != DType::kF64) continue;
      return Status(Code::kInvalidArgument, n.op + " '" + n.name + "' computes f64 tensor '" + g.tensor(out).name +
                                                "' between a trainable parameter and the loss: pock trains in f32, f16 "
                                                "and bf16 only (keep that path in float32)");
    }
  }
  return Status::ok();
}

}  // namespace

Result<Backward> build_backward(Graph& graph, std::vector<Node>& forward, TensorId loss,
                                const std::vector<TensorId>& wrt) {
  const TensorDesc& loss_desc = graph.tensor(loss);
  if (loss_desc.dtype != DType::kF32 || numel(loss_desc.shape) != 1) {
    return Status(Code::kInvalidArgument, "the loss '" + loss_desc.name + "' must be an f32 scalar, got " +
                                              dtype_name(loss_desc.dtype) + shape_str(loss_desc.shape));
  }
  const std::vector<bool> dep = depends_on_wrt(graph, forward, wrt);
  const std::vector<bool> reach = reaches_loss(graph, forward, loss);
  auto needs_grad = [&](TensorId id) { return id != kNoTensor && dep[id] && reach[id]; };
  POCK_RETURN_IF_ERROR(refuse_f64_gradients(graph, forward, needs_grad));

  Backward result;
  std::vector<TensorId> grad(graph.num_tensors(), kNoTensor);
  auto accumulate = [&](TensorId target, TensorId contribution) -> Status {
    if (grad[target] == kNoTensor) {
      grad[target] = contribution;
      return Status::ok();
    }
    auto sum = graph.create_node("Add", {grad[target], contribution}, {},
                                 graph.unique_name(graph.tensor(target).name + "/grad_sum"));
    if (!sum.is_ok()) return sum.status();
    sum->phase = Phase::kBackward;
    grad[target] = sum->outputs[0];
    result.nodes.push_back(std::move(sum.value()));
    return Status::ok();
  };
  if (needs_grad(loss)) grad[loss] = add_constant_scalar_like(graph, loss, 1.0f);

  const GradRegistry& rules = GradRegistry::global();
  std::vector<std::vector<Node>> saved_after(forward.size());  // filled by the rules, spliced in at the end
  for (size_t k = forward.size(); k-- > 0;) {
    const Node& n = forward[k];
    std::vector<bool> needs(n.inputs.size(), false);
    bool any_input = false;
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      needs[i] = needs_grad(n.inputs[i]);
      any_input = any_input || needs[i];
    }
    if (!any_input) continue;  // nothing below this node trains: it emits nothing
    std::vector<TensorId> dy(n.outputs.size(), kNoTensor);
    bool any_output = false;
    for (size_t i = 0; i < n.outputs.size(); ++i) {
      dy[i] = grad[n.outputs[i]];
      any_output = any_output || dy[i] != kNoTensor;
    }
    if (!any_output) continue;
    const GradFn rule = rules.find(n.op);
    if (!rule) {
      return Status(Code::kUnsupportedOp, "no gradient rule for op " + n.op + " (node '" + n.name +
                                              "'), which lies between a trainable parameter and the loss");
    }
    GradContext ctx(graph, result.nodes, n, std::move(dy), needs, &forward, &saved_after[k]);
    Status s = rule(ctx);
    if (s.is_ok()) s = ctx.status();
    if (!s.is_ok()) return s;
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      if (!needs[i] || ctx.dx()[i] == kNoTensor) continue;
      POCK_ASSIGN_OR_RETURN(const TensorId dx, keep_trained_rows(graph, result.nodes, n, i, ctx.dx()[i]));
      POCK_RETURN_IF_ERROR(check_gradient(graph, n, i, dx));
      POCK_RETURN_IF_ERROR(accumulate(n.inputs[i], dx));
    }
  }
  insert_saved_forms(forward, saved_after);
  for (TensorId id : wrt) {
    if (grad[id] != kNoTensor) result.grads[id] = grad[id];
  }
  return result;
}

}  // namespace pock
