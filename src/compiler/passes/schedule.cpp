// Memory-aware scheduling: reorders a function's nodes to lower the peak of its arena. Any order
// that keeps the dependencies of schedule_deps.hpp computes the same values, and the order decides
// how long each intermediate lives. A greedy list scheduler builds one: among the nodes whose
// dependencies have run, it takes the one that frees the most bytes net of what it allocates
// (counting the in-place reuse emit.cpp will do), earlier original position first on ties, and an
// optimizer update as soon as it is ready (its gradient dies with it: PockEngine's reordering).
// Nodes that read nothing from the arena are then moved down to just before their first dependent.
// The result is kept only when the planner packs it into a smaller arena than the order it
// replaces, so the schedule never raises the planned peak.
#include <algorithm>
#include <optional>
#include <unordered_map>

#include "compiler/passes/arena_estimate.hpp"
#include "compiler/passes/passes.hpp"
#include "compiler/passes/schedule_deps.hpp"

namespace pock {
namespace {

class GreedyScheduler {
 public:
  GreedyScheduler(const Graph& g, const std::vector<Node>& nodes, const std::vector<bool>& in_arena,
                  bool updates_early)
      : g_(g), nodes_(nodes), in_arena_(in_arena), updates_early_(updates_early), deps_(node_dependencies(nodes)) {
    for (const Node& n : nodes_) {
      for (TensorId id : distinct_inputs(n)) ++readers_left_[id];
      is_update_.push_back(is_parameter_update(g_, n));
      non_updates_left_ += !is_update_.back();
    }
  }

  // Node indices in the new order.
  std::vector<size_t> run() {
    std::vector<int> waiting = deps_.predecessors;
    std::vector<size_t> ready, order;
    for (size_t k = 0; k < nodes_.size(); ++k) {
      if (waiting[k] == 0) ready.push_back(k);
    }
    while (!ready.empty()) {
      const size_t pick = choose(ready);
      const size_t k = ready[pick];
      ready.erase(ready.begin() + static_cast<std::ptrdiff_t>(pick));
      order.push_back(k);
      for (TensorId id : distinct_inputs(nodes_[k])) --readers_left_[id];
      non_updates_left_ -= !is_update_[k];
      for (size_t s : deps_.successors[k]) {
        if (--waiting[s] == 0) ready.push_back(s);
      }
    }
    return delay_sources(order);
  }

 private:
  // A node that reads nothing from the arena (only parameters, constants, inputs) frees nothing,
  // so the greedy choice runs it as soon as it is ready, typically at the very start, and its
  // outputs then live until their first reader. Run each such node right before the first node
  // that depends on it instead: its outputs live shorter and nothing else changes.
  std::vector<size_t> delay_sources(const std::vector<size_t>& order) const {
    std::vector<size_t> position(nodes_.size());
    for (size_t i = 0; i < order.size(); ++i) position[order[i]] = i;
    std::vector<std::vector<size_t>> before(nodes_.size());  // sources to run right before a node
    std::vector<bool> delayed(nodes_.size(), false);
    for (size_t k : order) {
      if (!is_source(k) || deps_.successors[k].empty()) continue;
      size_t first = deps_.successors[k][0];
      for (size_t s : deps_.successors[k]) first = position[s] < position[first] ? s : first;
      before[first].push_back(k);
      delayed[k] = true;
    }
    std::vector<size_t> out;
    out.reserve(order.size());
    // A delayed source may itself anchor another (a source reading a source's non-arena output).
    auto emit = [&](auto& self, size_t k) -> void {
      for (size_t s : before[k]) self(self, s);
      out.push_back(k);
    };
    for (size_t k : order) {
      if (!delayed[k]) emit(emit, k);
    }
    return out;
  }

  bool is_source(size_t k) const {
    if (has_side_effects(nodes_[k])) return false;
    for (TensorId id : nodes_[k].inputs) {
      if (in_arena(id)) return false;
    }
    return true;
  }

  static std::vector<TensorId> distinct_inputs(const Node& n) {
    std::vector<TensorId> out;
    for (TensorId id : n.inputs) {
      if (id != kNoTensor && std::find(out.begin(), out.end(), id) == out.end()) out.push_back(id);
    }
    return out;
  }

  bool in_arena(TensorId id) const { return id != kNoTensor && in_arena_[static_cast<size_t>(id)]; }
  uint64_t bytes(TensorId id) const { return g_.tensor(id).nbytes(); }

  // Bytes the arena frees minus bytes it allocates when node k runs now.
  int64_t net_freed(size_t k) const {
    const Node& n = nodes_[k];
    int64_t freed = 0, allocated = 0;
    TensorId dying_inplace = kNoTensor;
    const int ii = inplace_candidate(n);
    for (TensorId id : distinct_inputs(n)) {
      if (!in_arena(id) || readers_left_.at(id) != 1) continue;  // read again later: stays
      freed += static_cast<int64_t>(bytes(id));
      if (ii >= 0 && n.inputs[static_cast<size_t>(ii)] == id) dying_inplace = id;
    }
    for (TensorId out : n.outputs) {
      if (!in_arena(out)) continue;
      allocated += static_cast<int64_t>(bytes(out));
      if (!readers_left_.count(out)) freed += static_cast<int64_t>(bytes(out));  // never read: dies at once
    }
    if (dying_inplace != kNoTensor && in_arena(n.outputs[0]) && bytes(n.outputs[0]) == bytes(dying_inplace)) {
      freed -= static_cast<int64_t>(bytes(dying_inplace));  // the output takes that buffer over
      allocated -= static_cast<int64_t>(bytes(dying_inplace));
    }
    return freed - allocated;
  }

  // An update as soon as one is ready (when updates run early); else the best net freer.
  size_t choose(const std::vector<size_t>& ready) const {
    std::optional<size_t> update, other;
    int64_t other_net = 0;
    for (size_t i = 0; i < ready.size(); ++i) {
      const size_t k = ready[i];
      if (is_update_[k]) {
        if (!updates_early_ && non_updates_left_ > 0) continue;  // updates stay at the end
        if (!update || k < ready[*update]) update = i;
        continue;
      }
      const int64_t net = net_freed(k);
      if (!other || net > other_net || (net == other_net && k < ready[*other])) {
        other = i;
        other_net = net;
      }
    }
    if (update && (updates_early_ || !other)) return *update;
    return other.value_or(0);
  }

  const Graph& g_;
  const std::vector<Node>& nodes_;
  const std::vector<bool>& in_arena_;
  const bool updates_early_;
  const NodeDeps deps_;
  std::vector<bool> is_update_;
  std::unordered_map<TensorId, int> readers_left_;
  size_t non_updates_left_ = 0;
};

}  // namespace

ScheduleResult schedule_for_memory(const TrainingProgram& program, FunctionDef& fn, bool updates_early) {
  const std::vector<bool> in_arena = arena_resident(program);
  ScheduleResult result;
  result.peak_before = estimate_arena(program.graph, fn.nodes, in_arena).peak;
  result.peak_after = result.peak_before;
  const std::vector<size_t> order = GreedyScheduler(program.graph, fn.nodes, in_arena, updates_early).run();
  if (order.size() != fn.nodes.size()) return result;  // a dependency cycle cannot come from a valid function
  std::vector<Node> candidate;
  candidate.reserve(order.size());
  for (size_t k : order) candidate.push_back(fn.nodes[k]);
  const uint64_t peak = estimate_arena(program.graph, candidate, in_arena).peak;
  if (peak >= result.peak_before) return result;
  fn.nodes = std::move(candidate);
  result.peak_after = peak;
  result.reordered = true;
  return result;
}

}  // namespace pock
