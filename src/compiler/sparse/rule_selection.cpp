#include "compiler/sparse/rule_selection.hpp"

#include <cmath>
#include <string>

#include "compiler/sparse/blocks.hpp"
#include "compiler/sparse/name_glob.hpp"

namespace pock {
namespace {

using Candidates = std::vector<TensorId>;

Status rule_error(Code code, size_t index, const char* field, const std::string& message) {
  std::string where = "trainable[" + std::to_string(index) + "]";
  if (field && *field) where += std::string(".") + field;
  return Status(code, where + ": " + message);
}

template <typename Keep>
Candidates filter(const Candidates& in, Keep keep) {
  Candidates out;
  for (TensorId id : in) {
    if (keep(id)) out.push_back(id);
  }
  return out;
}

// What the rule's earlier selectors kept, for messages when a later one leaves nothing.
std::string narrowed_by(const TrainableRule& rule) {
  std::string s;
  if (!rule.match.empty()) s += " matched by '" + rule.match + "'";
  if (!rule.layers.empty()) s += std::string(s.empty() ? "" : " and") + " in layers '" + rule.layers + "'";
  return s.empty() ? " of the model" : s;
}

// The leading rows a partial-channel rule trains of a weight with `rows` rows (-1: all of them).
Result<int64_t> partial_rows(const TrainableRule& rule, size_t index, const TensorDesc& weight) {
  const int64_t rows = weight.shape[0];
  int64_t k = rows;
  if (rule.channels >= 1) {
    if (rule.channels > rows) {
      return rule_error(Code::kInvalidArgument, index, "channels",
                        std::to_string(rule.channels) + " exceeds the " + std::to_string(rows) +
                            " output channels of '" + weight.name + "' (use a fraction to scale per layer)");
    }
    k = rule.channels;
  } else if (rule.channel_ratio > 0) {
    // ceil keeps at least one channel of every selected layer; the small epsilon keeps an exact
    // product (0.25 * 32) from rounding up past its value.
    k = static_cast<int64_t>(std::ceil(rule.channel_ratio * static_cast<double>(rows) - 1e-9));
    k = std::max<int64_t>(1, std::min(k, rows));
  }
  return k >= rows ? -1 : k;
}

bool wants_partial(const TrainableRule& rule) { return rule.channels >= 1 || rule.channel_ratio > 0; }

}  // namespace

SelectionContext make_selection_context(const Graph& graph, std::unordered_set<TensorId> excluded) {
  SelectionContext ctx;
  ctx.graph = &graph;
  ctx.excluded = std::move(excluded);
  ctx.layers = find_layers(graph, ctx.excluded);
  ctx.biases = find_biases(graph, ctx.layers, ctx.excluded);
  return ctx;
}

Result<RowSelection> select_by_rule(const SelectionContext& ctx, const TrainableRule& rule, size_t index) {
  const Graph& g = *ctx.graph;
  if (rule.match.empty() && rule.layers.empty() && rule.blocks.empty() && !rule.bias_only) {
    return rule_error(Code::kInvalidArgument, index, "", "a rule needs at least one of 'match', 'layers', 'blocks', 'bias_only'");
  }
  if (rule.channels >= 1 && rule.channel_ratio > 0) {
    return rule_error(Code::kInvalidArgument, index, "channels",
                      "give either a count ('channels') or a fraction ('channel_ratio'), not both");
  }
  Candidates selected;
  for (size_t id = 0; id < g.num_tensors(); ++id) {
    const TensorId t = static_cast<TensorId>(id);
    if (g.tensor(t).kind == TensorKind::kParameter && !ctx.excluded.count(t)) selected.push_back(t);
  }
  if (!rule.match.empty()) {
    const Status valid = validate_name_glob(rule.match);
    if (!valid.is_ok()) {
      return rule_error(Code::kInvalidArgument, index, "match", "'" + rule.match + "': " + valid.message());
    }
    selected = filter(selected, [&](TensorId t) { return name_glob_match(rule.match, g.tensor(t).name); });
    if (selected.empty()) {
      return rule_error(Code::kNotFound, index, "match", "'" + rule.match + "' matches no parameter of the model");
    }
  }
  if (!rule.layers.empty()) {
    auto span = parse_layer_span(rule.layers, ctx.layers.size());
    if (!span.is_ok()) return rule_error(Code::kInvalidArgument, index, "layers", span.status().message());
    std::unordered_set<TensorId> in_span;
    for (size_t l = span->begin; l < span->end; ++l) in_span.insert(ctx.layers[l].params.begin(), ctx.layers[l].params.end());
    TrainableRule only_match;
    only_match.match = rule.match;
    const std::string matched = narrowed_by(only_match);
    selected = filter(selected, [&](TensorId t) { return in_span.count(t) > 0; });
    if (selected.empty()) {
      return rule_error(Code::kNotFound, index, "layers", "'" + rule.layers + "' holds no parameter" + matched);
    }
  }
  if (!rule.blocks.empty()) {
    auto span = parse_block_span(rule.blocks, count_blocks(g));
    if (!span.is_ok()) return rule_error(Code::kInvalidArgument, index, "blocks", span.status().message());
    const std::string before = narrowed_by(rule);
    selected = filter(selected, [&](TensorId t) { return in_block_span(g.tensor(t).name, *span); });
    if (selected.empty()) return rule_error(Code::kNotFound, index, "blocks", "'" + rule.blocks + "' holds no parameter" + before);
  }
  if (rule.bias_only) {
    const std::string before = narrowed_by(rule);
    selected = filter(selected, [&](TensorId t) { return ctx.biases.count(t) > 0; });
    if (selected.empty()) return rule_error(Code::kNotFound, index, "bias_only", "no bias among the parameters" + before);
  }
  RowSelection out;
  bool any_weight = false;
  for (TensorId t : selected) {
    const TensorDesc& d = g.tensor(t);
    int64_t rows = -1;
    if (wants_partial(rule) && d.shape.size() >= 2) {
      any_weight = true;
      POCK_ASSIGN_OR_RETURN(rows, partial_rows(rule, index, d));
    }
    out[t] = rows;
  }
  if (wants_partial(rule) && !any_weight) {
    return rule_error(Code::kInvalidArgument, index, "channels",
                      "the rule selects no weight (a parameter of 2 or more dims) to update in part");
  }
  return out;
}

void merge_selection(RowSelection& into, const RowSelection& more) {
  for (const auto& [param, rows] : more) {
    auto [it, inserted] = into.emplace(param, rows);
    if (inserted) continue;
    it->second = (it->second < 0 || rows < 0) ? -1 : std::max(it->second, rows);
  }
}

void add_biases_of_trained_weights(const SelectionContext& ctx, RowSelection& selection) {
  RowSelection biases;
  for (const Layer& l : ctx.layers) {
    if (l.bias != kNoTensor && selection.count(l.weight)) biases[l.bias] = -1;
  }
  merge_selection(selection, biases);
}

}  // namespace pock
