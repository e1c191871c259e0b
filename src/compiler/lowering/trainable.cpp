#include "compiler/lowering/trainable.hpp"

#include <string>

#include "compiler/sparse/name_glob.hpp"
#include "compiler/sparse/rule_selection.hpp"

namespace pock {

bool glob_match(std::string_view pattern, std::string_view name) { return name_glob_match(pattern, name); }

namespace {

// Every float parameter not excluded trains in full (integer tables, e.g. quantized weights, stay
// frozen: they have no gradient).
RowSelection everything(const Graph& graph, const std::unordered_set<TensorId>& excluded) {
  RowSelection all;
  for (size_t id = 0; id < graph.num_tensors(); ++id) {
    const TensorId t = static_cast<TensorId>(id);
    const TensorDesc& d = graph.tensor(t);
    if (d.kind == TensorKind::kParameter && !excluded.count(t) && is_float(d.dtype)) all[t] = -1;
  }
  return all;
}

Result<RowSelection> resolve_rules(const Graph& graph, const std::vector<TrainableRule>& rules,
                                   const std::unordered_set<TensorId>& excluded) {
  const SelectionContext ctx = make_selection_context(graph, excluded);
  RowSelection selection;
  for (size_t r = 0; r < rules.size(); ++r) {
    POCK_ASSIGN_OR_RETURN(const RowSelection one, select_by_rule(ctx, rules[r], r));
    merge_selection(selection, one);
  }
  add_biases_of_trained_weights(ctx, selection);
  for (const auto& [param, rows] : selection) {
    const TensorDesc& t = graph.tensor(param);
    if (!is_float(t.dtype)) {
      return Status(Code::kInvalidArgument, "parameter '" + t.name + "' is " + dtype_name(t.dtype) +
                                                " and cannot train (only float parameters have gradients)");
    }
  }
  return selection;
}

// f64 is an inference dtype: training one would need f64 gradients, optimizers and kernels that pock
// does not have, and training it as f32 would change the model's numbers without a word.
Status refuse_f64(const Graph& graph, const RowSelection& selection) {
  for (const auto& [param, rows] : selection) {
    const TensorDesc& t = graph.tensor(param);
    if (t.dtype == DType::kF64) {
      return Status(Code::kInvalidArgument, "parameter '" + t.name + "' is f64, which pock runs but does not train "
                                            "(gradients are f32, f16 or bf16): freeze it in the recipe or export the "
                                            "model in float32");
    }
  }
  return Status::ok();
}

}  // namespace

Result<std::vector<TensorId>> select_trainable(Graph& graph, const std::vector<TrainableRule>& rules,
                                               const std::unordered_set<TensorId>& excluded) {
  RowSelection selection;
  if (rules.empty()) {
    selection = everything(graph, excluded);
  } else {
    POCK_ASSIGN_OR_RETURN(selection, resolve_rules(graph, rules, excluded));
  }
  POCK_RETURN_IF_ERROR(refuse_f64(graph, selection));
  std::vector<TensorId> out;
  for (size_t id = 0; id < graph.num_tensors(); ++id) {
    TensorDesc& t = graph.mutable_tensor(static_cast<TensorId>(id));
    if (t.kind != TensorKind::kParameter) continue;
    auto it = selection.find(static_cast<TensorId>(id));
    t.trainable = it != selection.end();
    t.channels = t.trainable ? it->second : -1;
    if (t.trainable) out.push_back(static_cast<TensorId>(id));
  }
  return out;
}

}  // namespace pock
