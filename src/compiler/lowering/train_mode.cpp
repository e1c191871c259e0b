#include "compiler/lowering/train_mode.hpp"

#include <string>
#include <unordered_map>

namespace pock {
namespace {

constexpr size_t kRunningMean = 3, kRunningVar = 4;

bool is_trainable(const Graph& g, const Node& n, size_t input) {
  return input < n.inputs.size() && n.inputs[input] != kNoTensor && g.tensor(n.inputs[input]).trainable;
}

// Whether the Conv2d / Linear / MatMul whose output feeds `x` has a trainable weight (any rows).
bool feeding_weight_trains(const Graph& g, const std::unordered_map<TensorId, const Node*>& producer, TensorId x) {
  auto it = producer.find(x);
  if (it == producer.end()) return false;
  const Node& n = *it->second;
  if (n.op == "Conv2d" || n.op == "Linear") return is_trainable(g, n, 1);
  if (n.op == "MatMul") return is_trainable(g, n, 0) || is_trainable(g, n, 1);
  return false;
}

// FNV-1a: a hash of the node's name that is the same on every platform and in every build.
uint64_t name_hash(const std::string& name) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : name) h = (h ^ c) * 1099511628211ull;
  return h;
}

// The mask seed of a Dropout node that fixes none: a hash of its name, so that passes which add
// or remove other nodes before this one leave every mask as it was. A node without a name (ONNX
// makes names optional), or whose seed another Dropout already has, falls back on its position.
int64_t dropout_seed(const Node& n, size_t position, std::unordered_set<int64_t>& used) {
  std::string key = n.name;
  if (key.empty()) key.append("#").append(std::to_string(position));
  for (int attempt = 0;; ++attempt) {
    const auto seed = static_cast<int64_t>(name_hash(key) >> 1);  // non-negative: attributes are i64
    if (used.insert(seed).second) return seed;
    key = n.name;
    key.append("#").append(std::to_string(position)).append("#").append(std::to_string(attempt));
  }
}

}  // namespace

std::unordered_set<size_t> batchnorm_nodes_in_train_form(const Graph& model, bool freeze_batchnorm_stats) {
  std::unordered_map<TensorId, const Node*> producer;
  for (const Node& n : model.nodes()) {
    for (TensorId out : n.outputs) producer[out] = &n;
  }
  std::unordered_set<size_t> out;
  for (size_t k = 0; k < model.nodes().size(); ++k) {
    const Node& n = model.nodes()[k];
    if (n.op != "BatchNorm") continue;
    // Sparse-BP schemes freeze a conv+BN layer's statistics when its weights are frozen: neither
    // the BN scale nor the weight of the layer feeding it trains. Its shift may still train
    // (bias-only schemes): an affine shift about the running statistics, as a BN folded into the
    // conv bias would train.
    const bool layer_trains = is_trainable(model, n, 1) || feeding_weight_trains(model, producer, n.inputs[0]);
    if (!freeze_batchnorm_stats || layer_trains) out.insert(k);
  }
  return out;
}

std::unordered_set<TensorId> batchnorm_running_stats(const Graph& model) {
  std::unordered_set<TensorId> out;
  for (const Node& n : model.nodes()) {
    if (n.op != "BatchNorm") continue;
    for (size_t i : {kRunningMean, kRunningVar}) {
      if (i < n.inputs.size() && n.inputs[i] != kNoTensor) out.insert(n.inputs[i]);
    }
  }
  return out;
}

Status make_running_stats_state(Graph& graph, const std::unordered_set<size_t>& train_form_nodes) {
  for (size_t k : train_form_nodes) {
    const Node& n = graph.nodes()[k];
    for (size_t i : {kRunningMean, kRunningVar}) {
      if (i >= n.inputs.size() || n.inputs[i] == kNoTensor) {
        return Status(Code::kInvalidArgument, "BatchNorm '" + n.name + "' has no running statistics to train with");
      }
      TensorDesc& t = graph.mutable_tensor(n.inputs[i]);
      if (t.kind == TensorKind::kState) continue;
      if (t.kind != TensorKind::kParameter && t.kind != TensorKind::kConstant) {
        return Status(Code::kInvalidArgument, "BatchNorm '" + n.name + "': running statistic '" + t.name + "' is a " +
                                                  tensor_kind_name(t.kind) + "; it must be a parameter or constant");
      }
      // Updated in place by BatchNormTrain, read by infer: persistent, checkpointed state.
      t.kind = TensorKind::kState;
      t.trainable = false;
    }
  }
  return Status::ok();
}

Result<ForwardClone> clone_forward(Graph& graph, ForwardMode mode, const std::string& prefix,
                                   const std::unordered_set<size_t>& train_form_bn, TensorId step) {
  ForwardClone clone;
  std::unordered_set<int64_t> dropout_seeds;
  // create_node adds tensors, never nodes, so references into graph.nodes() stay valid.
  for (size_t k = 0; k < graph.nodes().size(); ++k) {
    const Node& n = graph.nodes()[k];
    std::string op = n.op;
    std::vector<TensorId> inputs;
    for (TensorId in : n.inputs) inputs.push_back(in == kNoTensor ? kNoTensor : clone.map(in));
    Attrs attrs = n.attrs;
    std::vector<std::string> names;
    for (TensorId out : n.outputs) names.push_back(prefix + graph.tensor(out).name);
    if (mode == ForwardMode::kTrain && n.op == "BatchNorm" && train_form_bn.count(k)) {
      op = "BatchNormTrain";
      names.resize(1);
      names.push_back(prefix + n.name + ":saved_mean");
      names.push_back(prefix + n.name + ":saved_invstd");
    } else if (mode == ForwardMode::kTrain && n.op == "Dropout") {
      op = "DropoutTrain";
      inputs.resize(1);
      inputs.push_back(step);
      // Distinct, reproducible masks per Dropout node unless the model fixed a seed.
      if (!attrs.has("seed")) attrs.set("seed", dropout_seed(n, k, dropout_seeds));
      names.resize(1);
      names.push_back(prefix + n.name + ":mask");
    }
    auto node = graph.create_node(op, std::move(inputs), std::move(attrs), prefix + n.name, names);
    if (!node.is_ok()) return node.status();
    node->phase = Phase::kForward;
    for (size_t i = 0; i < n.outputs.size() && i < node->outputs.size(); ++i) clone.tensor[n.outputs[i]] = node->outputs[i];
    clone.nodes.push_back(std::move(node.value()));
  }
  return clone;
}

}  // namespace pock
