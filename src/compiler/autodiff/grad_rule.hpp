// Reverse-mode autodiff: one gradient rule per op. A rule sees the forward node and the gradients
// of its outputs, and emits backward nodes that compute the gradients of the inputs it is asked
// for. Rules live in src/compiler/autodiff/rules/<family>.cpp, one registration function per
// family of src/ir/op_families.def.
#pragma once
#include <string>
#include <unordered_map>
#include <vector>

#include "pock/compiler/graph.hpp"

namespace pock {

class GradContext {
 public:
  // `forward`: the function's forward nodes (for kept_by_backward); `forward_after`: where
  // emit_forward1 puts its nodes (run right after `node`). Null: not available.
  GradContext(Graph& graph, std::vector<Node>& backward, const Node& node, std::vector<TensorId> dy,
              std::vector<bool> needs_dx, const std::vector<Node>* forward = nullptr,
              std::vector<Node>* forward_after = nullptr)
      : graph_(graph), backward_(backward), forward_(forward), forward_after_(forward_after), node_(node),
        dy_(std::move(dy)), needs_dx_(std::move(needs_dx)), dx_(node.inputs.size(), kNoTensor) {}

  const Node& node() const { return node_; }
  const Attrs& attrs() const { return node_.attrs; }
  TensorId x(size_t i) const { return node_.inputs[i]; }    // forward input
  TensorId y(size_t i) const { return node_.outputs[i]; }   // forward output
  TensorId dy(size_t i) const { return i < dy_.size() ? dy_[i] : kNoTensor; }  // kNoTensor: no gradient flows
  bool needs(size_t i) const { return i < needs_dx_.size() && needs_dx_[i]; }
  // Partial-channel updates (compiler/sparse/partial_channels.hpp): when input i is a parameter
  // that trains only its leading k rows, k; else -1. A rule may then emit the cheaper gradient of
  // just those rows ([k, ...]); a full-shape gradient is sliced by the driver.
  int64_t leading_rows(size_t i) const;
  // The reference dies at the next emit (the tensor table grows): copy what you keep.
  const TensorDesc& desc(TensorId id) const { return graph_.tensor(id); }
  Graph& graph() { return graph_; }

  // Emits a backward node; returns its outputs. Errors are sticky: after one, emits return
  // kNoTensor and status() reports the first error.
  std::vector<TensorId> emit(const std::string& op, std::vector<TensorId> inputs, Attrs attrs = {});
  TensorId emit1(const std::string& op, std::vector<TensorId> inputs, Attrs attrs = {}) {
    auto outs = emit(op, std::move(inputs), std::move(attrs));
    return outs.empty() ? kNoTensor : outs[0];
  }
  // Emits a node that runs in the forward pass right after the forward node (same phase): what a
  // rule saves for the backward in a smaller form than the tensors it is computed from (a 1-byte
  // activation mask instead of an f32 activation), so that those can die before the backward.
  TensorId emit_forward1(const std::string& op, std::vector<TensorId> inputs, Attrs attrs = {});
  // Whether a backward node emitted so far reads `id`, or a reshaped / transposed copy of it made
  // in the forward pass. Rules run from the loss backwards, so when a forward node's rule runs,
  // every reader of its outputs has emitted its backward nodes: a yes for an output means that the
  // backward keeps its values alive anyway.
  bool kept_by_backward(TensorId id) const;
  // Reduces a broadcast gradient back to `shape` (sum over broadcast axes, then reshape).
  TensorId sum_to_shape(TensorId grad, const Shape& shape);
  // A constant scalar-filled tensor of the given shape (f32).
  TensorId constant(float value, const Shape& shape);

  void set_dx(size_t i, TensorId grad) { if (i < dx_.size()) dx_[i] = grad; }
  const std::vector<TensorId>& dx() const { return dx_; }
  Status status() const { return status_; }
  void fail(Status s) { if (status_.is_ok()) status_ = std::move(s); }

 private:
  Graph& graph_;
  std::vector<Node>& backward_;
  const std::vector<Node>* forward_;
  std::vector<Node>* forward_after_;
  const Node& node_;
  std::vector<TensorId> dy_;
  std::vector<bool> needs_dx_;
  std::vector<TensorId> dx_;
  Status status_;
};

using GradFn = Status (*)(GradContext& ctx);

// The fusion pass runs after autodiff, so a rule never sees a node with a fused activation from
// the compiler; one here came from a hand-built graph, and its gradient would need the
// pre-activation values. An error naming the node when it carries one (Conv2d, Linear, the
// BatchNorms), ok otherwise.
Status refuse_fused_activation(const GradContext& ctx);

class GradRegistry {
 public:
  static const GradRegistry& global();
  void add(const std::string& op, GradFn fn) { rules_[op] = fn; }
  GradFn find(const std::string& op) const {
    auto it = rules_.find(op);
    return it == rules_.end() ? nullptr : it->second;
  }

 private:
  std::unordered_map<std::string, GradFn> rules_;
};

#define POCK_OP_FAMILY(family) void register_##family##_gradients(GradRegistry& registry);
#include "ir/op_families.def"
#undef POCK_OP_FAMILY

}  // namespace pock
