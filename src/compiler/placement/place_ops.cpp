#include "compiler/placement/place_ops.hpp"

#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "compiler/cpu_conv_algorithms.hpp"
#include "compiler/placement/described_program.hpp"
#include "ir/conv_algorithm.hpp"
#include "ir/op_schema.hpp"
#include "runtime/backend_set.hpp"

namespace pock {
namespace {

// What each node writes that placement must keep in one space: its outputs, and the inputs its
// schema says it may update in place — except an intermediate that nothing reads afterwards (an
// optimizer update's gradient, which it zeroes only when it is an accumulator): a node on another
// device may scribble on its own copy of that.
using WriteSets = std::unordered_map<const Node*, std::vector<TensorId>>;

WriteSets placement_writes(const TrainingProgram& program) {
  WriteSets out;
  for (const FunctionDef& fn : program.functions) {
    std::unordered_map<TensorId, size_t> last_read;
    for (size_t k = 0; k < fn.nodes.size(); ++k) {
      for (TensorId t : fn.nodes[k].inputs) last_read[t] = k;
    }
    std::unordered_set<TensorId> signature(fn.outputs.begin(), fn.outputs.end());
    for (size_t k = 0; k < fn.nodes.size(); ++k) {
      const Node& n = fn.nodes[k];
      std::vector<TensorId>& writes = out[&n];
      writes.assign(n.outputs.begin(), n.outputs.end());
      const OpSchema* schema = SchemaRegistry::global().find(n.op);
      if (!schema) continue;
      for (int i : schema->mutated_inputs) {
        if (i >= static_cast<int>(n.inputs.size()) || n.inputs[static_cast<size_t>(i)] == kNoTensor) continue;
        const TensorId t = n.inputs[static_cast<size_t>(i)];
        const bool dead_intermediate = program.graph.tensor(t).kind == TensorKind::kActivation && last_read[t] == k &&
                                       !signature.count(t);
        if (!dead_intermediate) writes.push_back(t);
      }
    }
  }
  return out;
}

class Placer {
 public:
  Placer(TrainingProgram& program, const std::vector<pock_backend_v1*>& backends, PlacementSummary* summary)
      : p_(program), backends_(backends), summary_(summary) {}

  Status run(DescribedProgram& described) {
    writes_ = placement_writes(p_);
    POCK_RETURN_IF_ERROR(settle_writers(described));
    if (!any_device_node()) return Status::ok();
    home_ = std::vector<uint8_t>(p_.graph.num_tensors(), 0);
    for (const FunctionDef& fn : p_.functions) {
      for (const Node& n : fn.nodes) {
        for (TensorId t : writes_[&n]) home_[static_cast<size_t>(t)] = space_of_backend(n.backend);
      }
    }
    for (FunctionDef& fn : p_.functions) insert_copies(fn);
    p_.tensor_space = home_;
    return Status::ok();
  }

 private:
  bool is_device(const std::string& backend) const {
    for (pock_backend_v1* b : backends_) {
      if (backend == b->name) return owns_memory(*b);
    }
    return false;  // not loaded at compile time: nothing is known of its memory
  }
  bool any_device_node() const {
    for (const FunctionDef& fn : p_.functions) {
      for (const Node& n : fn.nodes) {
        if (is_device(n.backend)) return true;
      }
    }
    return false;
  }

  // Space id of a backend's memory (0: host), creating the space on first use.
  uint8_t space_of_backend(const std::string& backend) {
    if (!is_device(backend)) return 0;
    for (size_t i = 0; i < p_.memory_spaces.size(); ++i) {
      if (p_.memory_spaces[i] == backend) return static_cast<uint8_t>(i + 1);
    }
    p_.memory_spaces.push_back(backend);
    return static_cast<uint8_t>(p_.memory_spaces.size());
  }
  const std::string& space_name(uint8_t space) const {
    static const std::string host = "host";
    return space == 0 ? host : p_.memory_spaces[space - 1u];
  }

  // A tensor lives in one space, so all of its writers must run there; and what the caller sets
  // or reads is host memory, so nothing on a device may update it in place. Offending device
  // nodes move to the best host backend until no conflict is left (each move only removes some).
  Status settle_writers(DescribedProgram& described) {
    std::unordered_set<TensorId> pinned_host;
    for (const FunctionDef& fn : p_.functions) {
      pinned_host.insert(fn.inputs.begin(), fn.inputs.end());
      pinned_host.insert(fn.outputs.begin(), fn.outputs.end());
      if (fn.loss != kNoTensor) pinned_host.insert(fn.loss);
    }
    for (bool changed = true; changed;) {
      changed = false;
      std::unordered_map<TensorId, std::set<std::string>> writer_spaces;
      for (const Node* n : described.nodes) {
        const std::string space = is_device(n->backend) ? n->backend : std::string();
        for (TensorId t : writes_[n]) writer_spaces[t].insert(space);
      }
      for (size_t i = 0; i < described.nodes.size(); ++i) {
        Node& n = *described.nodes[i];
        if (!is_device(n.backend)) continue;
        bool conflict = false;
        for (TensorId t : writes_[&n]) conflict = conflict || writer_spaces[t].size() > 1;
        if (const OpSchema* schema = SchemaRegistry::global().find(n.op)) {
          for (int k : schema->mutated_inputs) {
            conflict = conflict || (k < static_cast<int>(n.inputs.size()) && pinned_host.count(n.inputs[static_cast<size_t>(k)]));
          }
        }
        if (!conflict) continue;
        POCK_ASSIGN_OR_RETURN(n.backend, best_scoring_backend(backends_, described.spec, described.spec.ops[i], true));
        ++summary_->moved_to_host;
        changed = true;
      }
    }
    return Status::ok();
  }

  TensorId add_twin(TensorId t, uint8_t space, TensorKind kind) {
    TensorDesc d = p_.graph.tensor(t);
    d.name = p_.graph.unique_name(d.name + "@" + space_name(space));
    d.kind = kind;
    d.trainable = false;
    d.channels = -1;
    if (kind != TensorKind::kConstant) d.data.reset();
    const TensorId id = p_.graph.add_tensor(std::move(d));
    home_.resize(p_.graph.num_tensors(), 0);
    home_[static_cast<size_t>(id)] = space;
    return id;
  }

  Node copy_node(TensorId from, TensorId to, uint8_t device_space, Phase phase) {
    Node c;
    c.op = "Copy";
    c.name = "copy " + p_.graph.tensor(from).name + " -> " + p_.graph.tensor(to).name;
    c.inputs = {from};
    c.outputs = {to};
    c.phase = phase;
    c.backend = space_name(device_space);
    ++summary_->copies;
    return c;
  }

  // The tensor a node in `space` reads in place of `t`: t itself when it lives there, else a
  // replica (constants) or the copy made for this function since t was last written.
  TensorId readable_in(TensorId t, uint8_t space, Phase phase, std::vector<Node>& out) {
    if (home_[static_cast<size_t>(t)] == space) return t;
    const auto key = std::make_pair(t, space);
    if (stored_in_weights(p_.graph.tensor(t))) {
      auto it = constant_replicas_.find(key);
      if (it == constant_replicas_.end()) it = constant_replicas_.emplace(key, add_twin(t, space, TensorKind::kConstant)).first;
      return it->second;
    }
    auto it = current_.find(key);
    if (it != current_.end()) return it->second;
    TensorId source = t;
    uint8_t from = home_[static_cast<size_t>(t)];
    if (from != 0 && space != 0) {  // device to another device: through host memory
      source = readable_in(t, 0, phase, out);
      from = 0;
    }
    const TensorId copy = add_twin(t, space, TensorKind::kActivation);
    out.push_back(copy_node(source, copy, space != 0 ? space : from, phase));
    current_[key] = copy;
    return copy;
  }

  void insert_copies(FunctionDef& fn) {
    current_.clear();
    std::unordered_set<TensorId> signature(fn.outputs.begin(), fn.outputs.end());
    if (fn.loss != kNoTensor) signature.insert(fn.loss);
    std::vector<Node> out;
    out.reserve(fn.nodes.size());
    for (const Node& original : fn.nodes) {
      Node n = original;
      const uint8_t space = space_of_backend(n.backend);
      for (TensorId& t : n.inputs) {
        if (t != kNoTensor) t = readable_in(t, space, n.phase, out);
      }
      for (TensorId t : writes_[&original]) {
        for (uint8_t s = 0; s <= p_.memory_spaces.size(); ++s) current_.erase({t, s});
      }
      // A device node writes the caller's output into a device twin; a Copy brings it home.
      std::vector<std::pair<TensorId, TensorId>> returns;
      for (TensorId& t : n.outputs) {
        if (space == 0 || !signature.count(t)) continue;
        const TensorId twin = add_twin(t, space, TensorKind::kActivation);
        returns.emplace_back(twin, t);
        home_[static_cast<size_t>(t)] = 0;
        t = twin;
      }
      const Phase phase = n.phase;
      out.push_back(std::move(n));
      for (const auto& [twin, t] : returns) {
        out.push_back(copy_node(twin, t, space, phase));
        current_[{t, space}] = twin;
      }
    }
    fn.nodes = std::move(out);
  }

  TrainingProgram& p_;
  const std::vector<pock_backend_v1*>& backends_;
  PlacementSummary* summary_;
  std::vector<uint8_t> home_;
  WriteSets writes_;
  std::map<std::pair<TensorId, uint8_t>, TensorId> constant_replicas_, current_;
};

}  // namespace

Status place_ops(TrainingProgram& program, const CompileOptions& options, const std::vector<pock_backend_v1*>& backends,
                 PlacementSummary* summary) {
  PlacementSummary sum;
  DescribedProgram described = describe_program(program);
  POCK_RETURN_IF_ERROR(choose_backends(options, backends, &described.spec, &sum.choice));
  POCK_ASSIGN_OR_RETURN(const std::vector<std::string> algorithms,
                        profiled_cpu_algorithms(options.profile_path, described.spec));
  for (size_t i = 0; i < described.nodes.size(); ++i) {
    described.nodes[i]->backend = described.spec.ops[i].backend;
    if (!algorithms[i].empty()) described.nodes[i]->attrs.set(kConvAlgorithmAttr, algorithms[i]);
  }
  Placer placer(program, backends, &sum);
  POCK_RETURN_IF_ERROR(placer.run(described));
  if (summary) *summary = sum;
  return Status::ok();
}

}  // namespace pock
