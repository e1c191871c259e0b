#include "compiler/memplan/function_plan.hpp"

#include <algorithm>
#include <numeric>
#include <unordered_map>

#include "ir/op_schema.hpp"

namespace pock {

int inplace_candidate(const Node& n) {
  const OpSchema* schema = SchemaRegistry::global().find(n.op);
  if (!schema || schema->inplace_input < 0 || n.outputs.empty()) return -1;
  const size_t ii = static_cast<size_t>(schema->inplace_input);
  if (ii >= n.inputs.size() || n.inputs[ii] == kNoTensor) return -1;
  for (size_t j = 0; j < n.inputs.size(); ++j) {
    if (j != ii && n.inputs[j] == n.inputs[ii]) return -1;  // Mul(x, x) must not overwrite x
  }
  return static_cast<int>(ii);
}

bool is_view_candidate(const Node& n) {
  const OpSchema* schema = SchemaRegistry::global().find(n.op);
  return schema && schema->is_view && !n.inputs.empty() && n.inputs[0] != kNoTensor && !n.outputs.empty();
}

std::vector<bool> tensors_written_in_place(const std::vector<Node>& nodes, size_t num_tensors) {
  std::vector<bool> mutated(num_tensors, false);
  for (const Node& n : nodes) {
    const OpSchema* schema = SchemaRegistry::global().find(n.op);
    if (!schema) continue;
    for (int i : schema->mutated_inputs) {
      if (static_cast<size_t>(i) < n.inputs.size() && n.inputs[static_cast<size_t>(i)] != kNoTensor) {
        mutated[static_cast<size_t>(n.inputs[static_cast<size_t>(i)])] = true;
      }
    }
  }
  return mutated;
}

Result<FunctionArenaPlan> plan_function_arena(const Graph& g, const std::vector<Node>& nodes,
                                              const std::vector<bool>& in_arena) {
  FunctionArenaPlan out;
  std::unordered_map<TensorId, size_t> request_of;
  for (size_t k = 0; k < nodes.size(); ++k) {
    const int32_t at = static_cast<int32_t>(k);
    for (TensorId id : nodes[k].inputs) {
      if (id == kNoTensor || !in_arena[static_cast<size_t>(id)]) continue;
      auto it = request_of.find(id);
      if (it == request_of.end()) {
        return Status(Code::kInternal, "'" + g.tensor(id).name + "' is read by " + nodes[k].op + " '" + nodes[k].name +
                                           "' before it is written");
      }
      out.lifetimes[it->second].last = at;
    }
    for (TensorId id : nodes[k].outputs) {
      if (!in_arena[static_cast<size_t>(id)] || request_of.count(id)) continue;
      request_of[id] = out.lifetimes.size();
      out.lifetimes.push_back({g.tensor(id).nbytes(), at, at});
      out.tensors.push_back(id);
    }
  }
  // Buffer groups (union-find): a view shares its input's buffer for as long as either lives; an
  // in-place output takes over a buffer whose every tensor dies at that op.
  std::vector<size_t> group(out.lifetimes.size());
  std::iota(group.begin(), group.end(), size_t{0});
  auto root = [&](size_t r) {
    while (group[r] != r) r = group[r] = group[group[r]];
    return r;
  };
  std::vector<int32_t> group_last(out.lifetimes.size());
  for (size_t r = 0; r < out.lifetimes.size(); ++r) group_last[r] = out.lifetimes[r].last;
  auto join = [&](size_t keep, size_t into) {
    const size_t a = root(keep), b = root(into);
    if (a == b) return;
    group[a] = b;
    group_last[b] = std::max(group_last[a], group_last[b]);
  };
  auto requests_of = [&](const Node& n, int input) -> std::pair<const size_t*, const size_t*> {
    auto in = request_of.find(n.inputs[static_cast<size_t>(input)]);
    auto res = request_of.find(n.outputs[0]);
    if (in == request_of.end() || res == request_of.end()) return {nullptr, nullptr};
    return {&in->second, &res->second};
  };
  const std::vector<bool> written_in_place = tensors_written_in_place(nodes, g.num_tensors());
  for (const Node& n : nodes) {
    if (!is_view_candidate(n) || written_in_place[static_cast<size_t>(n.inputs[0])] ||
        written_in_place[static_cast<size_t>(n.outputs[0])]) {
      continue;
    }
    auto [in, res] = requests_of(n, 0);
    if (in && out.lifetimes[*in].size == out.lifetimes[*res].size) join(*res, *in);
  }
  for (size_t k = 0; k < nodes.size(); ++k) {
    const int ii = inplace_candidate(nodes[k]);
    if (ii < 0) continue;
    auto [in, res] = requests_of(nodes[k], ii);
    if (!in) continue;
    const int32_t at = static_cast<int32_t>(k);
    // The whole input group must die here: a view of the input read later would see the output.
    // Same dtype: a bf16 output (output_dtype) of a broadcast f32 input as large in bytes would
    // overwrite values the kernel reads again.
    const Node& n = nodes[k];
    const bool same_dtype = g.tensor(n.inputs[static_cast<size_t>(ii)]).dtype == g.tensor(n.outputs[0]).dtype;
    if (group_last[root(*in)] == at && out.lifetimes[*res].first == at && same_dtype &&
        out.lifetimes[*in].size == out.lifetimes[*res].size && root(*in) != root(*res)) {
      join(*res, *in);
    }
  }
  std::vector<BufferRequest> merged;
  std::vector<size_t> merged_of(out.lifetimes.size());
  std::unordered_map<size_t, size_t> index_of_root;
  for (size_t r = 0; r < out.lifetimes.size(); ++r) {
    auto [it, fresh] = index_of_root.emplace(root(r), merged.size());
    if (fresh) {
      merged.push_back(out.lifetimes[r]);
    } else {
      BufferRequest& m = merged[it->second];
      m.size = std::max(m.size, out.lifetimes[r].size);
      m.first = std::min(m.first, out.lifetimes[r].first);
      m.last = std::max(m.last, out.lifetimes[r].last);
    }
    merged_of[r] = it->second;
  }
  out.plan = plan_memory(merged);
  out.buffer_of = merged_of;
  out.offsets.resize(out.lifetimes.size());
  for (size_t r = 0; r < out.lifetimes.size(); ++r) out.offsets[r] = out.plan.offsets[merged_of[r]];
  return out;
}

}  // namespace pock
