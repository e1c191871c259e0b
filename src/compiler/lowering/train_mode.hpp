// Clones the model's forward nodes into a train or eval function. Each function owns its
// activations (emit.cpp plans one arena per function), so every clone gets fresh output tensors;
// parameters, inputs and state stay shared.
#pragma once
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "compiler/program.hpp"

namespace pock {

enum class ForwardMode { kTrain, kEval };

struct ForwardClone {
  std::vector<Node> nodes;
  std::unordered_map<TensorId, TensorId> tensor;  // model activation -> its clone in this function
  TensorId map(TensorId model_tensor) const {
    auto it = tensor.find(model_tensor);
    return it == tensor.end() ? model_tensor : it->second;
  }
};

// BatchNorm nodes that run in training form (batch statistics, running stats updated in place).
// Their running statistics must be mutable state: see make_running_stats_state.
std::unordered_set<size_t> batchnorm_nodes_in_train_form(const Graph& model, bool freeze_batchnorm_stats);
// Running-statistic tensors (inputs 3 and 4) of every BatchNorm node; never trainable.
std::unordered_set<TensorId> batchnorm_running_stats(const Graph& model);
// Turns the running statistics of the given BatchNorm nodes into checkpointed kState tensors.
Status make_running_stats_state(Graph& graph, const std::unordered_set<size_t>& train_form_nodes);

// Train form: BatchNorm -> BatchNormTrain (for `train_form_bn`, indices into graph.nodes()),
// Dropout -> DropoutTrain fed by `step`. Eval form: the inference ops. Tensor names get `prefix`.
Result<ForwardClone> clone_forward(Graph& graph, ForwardMode mode, const std::string& prefix,
                                   const std::unordered_set<size_t>& train_form_bn, TensorId step);

}  // namespace pock
