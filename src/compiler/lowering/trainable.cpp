#include "compiler/lowering/trainable.hpp"

#include <string>

namespace pock {

bool glob_match(std::string_view pattern, std::string_view name) {
  // Iterative matcher with one backtrack point: linear enough for parameter names.
  size_t p = 0, n = 0, star = std::string_view::npos, resume = 0;
  while (n < name.size()) {
    if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == name[n])) {
      ++p;
      ++n;
    } else if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      resume = n;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      n = ++resume;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

namespace {

Status check_rule_supported(const TrainableRule& rule, size_t index) {
  const std::string where = "trainable[" + std::to_string(index) + "]";
  auto unsupported = [&](const std::string& field) {
    return Status(Code::kInvalidArgument, where + "." + field +
                                              ": sparse selection by " + field +
                                              " is not supported by this compiler yet; select parameters with 'match'");
  };
  if (!rule.layers.empty()) return unsupported("layers");
  if (rule.bias_only) return unsupported("bias_only");
  if (rule.channel_ratio >= 0) return unsupported("channels");
  if (rule.channels >= 0) return unsupported("channels");
  if (rule.match.empty()) return Status(Code::kInvalidArgument, where + ".match: a rule must name parameters to select");
  return Status::ok();
}

}  // namespace

Result<std::vector<TensorId>> select_trainable(Graph& graph, const std::vector<TrainableRule>& rules,
                                               const std::unordered_set<TensorId>& excluded) {
  const size_t nt = graph.num_tensors();
  std::vector<bool> selected(nt, false);
  for (size_t r = 0; r < rules.size(); ++r) POCK_RETURN_IF_ERROR(check_rule_supported(rules[r], r));
  for (size_t r = 0; r < rules.size(); ++r) {
    bool matched = false;
    for (size_t id = 0; id < nt; ++id) {
      const TensorDesc& t = graph.tensor(static_cast<TensorId>(id));
      if (t.kind != TensorKind::kParameter || excluded.count(static_cast<TensorId>(id))) continue;
      if (!glob_match(rules[r].match, t.name)) continue;
      matched = true;
      selected[id] = true;
    }
    if (!matched) {
      return Status(Code::kNotFound, "trainable[" + std::to_string(r) + "].match: '" + rules[r].match +
                                         "' matches no parameter of the model");
    }
  }
  std::vector<TensorId> out;
  for (size_t id = 0; id < nt; ++id) {
    TensorDesc& t = graph.mutable_tensor(static_cast<TensorId>(id));
    if (t.kind != TensorKind::kParameter) continue;
    const bool take = rules.empty() ? !excluded.count(static_cast<TensorId>(id)) : selected[id];
    if (take && !is_float(t.dtype)) {
      if (!rules.empty()) {
        return Status(Code::kInvalidArgument, "parameter '" + t.name + "' is " + dtype_name(t.dtype) +
                                                  " and cannot train (only float parameters have gradients)");
      }
      continue;  // integer tables (e.g. quantized weights) stay frozen when everything trains
    }
    t.trainable = take;
    if (take) out.push_back(static_cast<TensorId>(id));
  }
  return out;
}

}  // namespace pock
