#include "compiler/emit.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <unordered_map>

#include "compiler/backend_choice.hpp"
#include "compiler/memplan/planner.hpp"
#include "ir/op_schema.hpp"

namespace pock {
namespace {

uint64_t align64(uint64_t v) { return (v + 63) / 64 * 64; }

// One letter per Phase, in enum order: the metadata's "op_phases" string (docs/blob-format.md).
char phase_letter(Phase phase) { return "FLBU"[static_cast<int>(phase)]; }

}  // namespace

Status emit_program(const TrainingProgram& program, const CompileOptions& options, ProgramSpec* spec,
                    CompileReport* report) {
  const Graph& g = program.graph;
  const size_t nt = g.num_tensors();
  std::vector<int32_t> remap(nt, -1);
  std::vector<bool> is_io(nt, false);
  std::vector<int> owner(nt, -1);  // function that produces an arena tensor
  std::vector<TensorId> order;

  auto use = [&](TensorId id) {
    if (id == kNoTensor) return;
    if (remap[id] < 0) {
      remap[id] = static_cast<int32_t>(order.size());
      order.push_back(id);
    }
  };
  for (size_t f = 0; f < program.functions.size(); ++f) {
    const FunctionDef& fn = program.functions[f];
    for (TensorId id : fn.inputs) { use(id); is_io[id] = true; }
    for (TensorId id : fn.outputs) { use(id); is_io[id] = true; }
    if (fn.loss != kNoTensor) { use(fn.loss); is_io[fn.loss] = true; }
    for (const Node& n : fn.nodes) {
      for (TensorId id : n.inputs) use(id);
      for (TensorId id : n.outputs) {
        use(id);
        if (owner[id] >= 0 && owner[id] != static_cast<int>(f)) {
          return Status(Code::kInternal, "tensor '" + g.tensor(id).name + "' is produced in two functions");
        }
        owner[id] = static_cast<int>(f);
      }
    }
  }
  // Trainable parameters are always carried so that they can be read back and checkpointed.
  for (size_t id = 0; id < nt; ++id) {
    if (g.tensors()[id].kind == TensorKind::kParameter && g.tensors()[id].trainable) use(static_cast<TensorId>(id));
  }
  if (program.step != kNoTensor) use(program.step);

  spec->tensors.clear();
  spec->tensors.resize(order.size());
  uint64_t persistent = 0;
  CompileReport rep;
  for (size_t i = 0; i < order.size(); ++i) {
    const TensorDesc& d = g.tensor(order[i]);
    TensorSpec& t = spec->tensors[i];
    t.name = d.name;
    t.dtype = d.dtype;
    t.shape = d.shape;
    t.kind = d.kind;
    t.trainable = d.trainable;
    t.channels = d.trainable ? d.channels : -1;
    t.nbytes = d.nbytes();
    const bool has_data = d.data && !d.data->empty();
    if (has_data && d.data->size() != t.nbytes) {
      return Status(Code::kInvalidArgument, "tensor '" + d.name + "' holds " + std::to_string(d.data->size()) +
                                                " bytes of data but its shape needs " + std::to_string(t.nbytes));
    }
    switch (d.kind) {
      case TensorKind::kParameter:
        rep.weights_bytes += t.nbytes;
        if (d.trainable) {
          rep.trainable_bytes += t.nbytes;
          t.storage = Storage::kPersistent;
          t.checkpointed = true;
        } else {
          t.storage = Storage::kWeights;
        }
        break;
      case TensorKind::kState:
        t.storage = Storage::kPersistent;
        t.checkpointed = true;
        if (order[i] != program.step) rep.optimizer_state_bytes += t.nbytes;
        break;
      case TensorKind::kConstant: t.storage = Storage::kWeights; break;
      case TensorKind::kInput: t.storage = Storage::kPersistent; break;
      case TensorKind::kActivation:
      case TensorKind::kOutput:
        if (is_io[order[i]]) {
          t.storage = Storage::kPersistent;
          t.kind = TensorKind::kOutput;
        } else {
          t.storage = Storage::kArena;
        }
        break;
    }
    if (t.storage == Storage::kWeights) {
      if (!has_data && t.nbytes) return Status(Code::kInvalidArgument, "parameter or constant '" + d.name + "' has no data");
      t.offset = spec->add_weight(has_data ? d.data->data() : nullptr, t.nbytes);
    } else if (t.storage == Storage::kPersistent) {
      t.offset = persistent;
      persistent += align64(t.nbytes);
      if (has_data) {
        t.has_init = true;
        t.init_offset = spec->add_weight(d.data->data(), t.nbytes);
      }
    }
  }
  spec->persistent_bytes = persistent;
  rep.persistent_bytes = persistent;
  spec->step_tensor = program.step == kNoTensor ? -1 : remap[program.step];

  // Ops and per-function arena plans.
  spec->ops.clear();
  spec->functions.clear();
  spec->arena_bytes = 0;
  std::string op_phases;  // by op index, for FLOP accounting and per-phase profiles (pockc inspect, bench)
  for (size_t f = 0; f < program.functions.size(); ++f) {
    const FunctionDef& fn = program.functions[f];
    FunctionSpec fs;
    fs.name = fn.name;
    for (TensorId id : fn.inputs) fs.inputs.push_back(remap[id]);
    for (TensorId id : fn.outputs) fs.outputs.push_back(remap[id]);
    fs.loss = fn.loss == kNoTensor ? -1 : remap[fn.loss];
    std::unordered_map<int32_t, size_t> request_of;  // spec tensor -> request
    std::vector<BufferRequest> requests;
    std::vector<int32_t> request_tensor;
    for (size_t k = 0; k < fn.nodes.size(); ++k) {
      const Node& n = fn.nodes[k];
      OpSpec op;
      op.op = n.op;
      op.name = n.name;
      op.attrs = n.attrs;
      for (TensorId id : n.inputs) {
        const int32_t t = id == kNoTensor ? -1 : remap[id];
        op.inputs.push_back(t);
        if (t >= 0 && spec->tensors[t].storage == Storage::kArena) {
          auto it = request_of.find(t);
          if (it == request_of.end()) {
            return Status(Code::kInternal, "function '" + fn.name + "': '" + spec->tensors[t].name + "' is read by " + n.op +
                                               " '" + n.name + "' before it is written");
          }
          requests[it->second].last = static_cast<int32_t>(k);
        }
      }
      for (TensorId id : n.outputs) {
        const int32_t t = remap[id];
        op.outputs.push_back(t);
        if (spec->tensors[t].storage == Storage::kArena && !request_of.count(t)) {
          request_of[t] = requests.size();
          requests.push_back({spec->tensors[t].nbytes, static_cast<int32_t>(k), static_cast<int32_t>(k)});
          request_tensor.push_back(t);
        }
      }
      fs.ops.push_back(static_cast<uint32_t>(spec->ops.size()));
      op_phases.push_back(phase_letter(n.phase));
      spec->ops.push_back(std::move(op));
    }
    // In-place elementwise: an output takes its input's buffer when the input dies at that op.
    std::vector<size_t> group(requests.size());
    for (size_t r = 0; r < group.size(); ++r) group[r] = r;
    auto root = [&](size_t r) {
      while (group[r] != r) r = group[r] = group[group[r]];
      return r;
    };
    for (size_t k = 0; k < fn.nodes.size(); ++k) {
      const Node& n = fn.nodes[k];
      const OpSchema* schema = SchemaRegistry::global().find(n.op);
      if (!schema || schema->inplace_input < 0 || n.outputs.empty()) continue;
      const size_t ii = static_cast<size_t>(schema->inplace_input);
      if (ii >= n.inputs.size() || n.inputs[ii] == kNoTensor) continue;
      auto in = request_of.find(remap[n.inputs[ii]]);
      auto out = request_of.find(remap[n.outputs[0]]);
      if (in == request_of.end() || out == request_of.end()) continue;
      const BufferRequest& rin = requests[in->second];
      const BufferRequest& rout = requests[out->second];
      bool read_twice = false;  // Mul(x, x) must not overwrite x while reading it as input 1
      for (size_t j = 0; j < n.inputs.size(); ++j) read_twice = read_twice || (j != ii && n.inputs[j] == n.inputs[ii]);
      if (rin.last == static_cast<int32_t>(k) && rout.first == static_cast<int32_t>(k) && rin.size == rout.size && !read_twice) {
        group[root(out->second)] = root(in->second);
      }
    }
    std::vector<BufferRequest> merged;
    std::vector<size_t> merged_of(requests.size());
    std::unordered_map<size_t, size_t> index_of_root;
    for (size_t r = 0; r < requests.size(); ++r) {
      const size_t g = root(r);
      auto it = index_of_root.find(g);
      if (it == index_of_root.end()) {
        it = index_of_root.emplace(g, merged.size()).first;
        merged.push_back(requests[r]);
      } else {
        BufferRequest& m = merged[it->second];
        m.size = std::max(m.size, requests[r].size);
        m.first = std::min(m.first, requests[r].first);
        m.last = std::max(m.last, requests[r].last);
      }
      merged_of[r] = it->second;
    }
    const MemoryPlan plan = plan_memory(merged);
    for (size_t r = 0; r < requests.size(); ++r) spec->tensors[request_tensor[r]].offset = plan.offsets[merged_of[r]];
    fs.arena_bytes = plan.peak;
    spec->arena_bytes = std::max(spec->arena_bytes, plan.peak);
    const bool headline = fn.name == "train" || (fn.name == "infer" && rep.arena_peak_bytes == 0);
    if (headline) {
      rep.arena_peak_bytes = plan.peak;
      rep.arena_lower_bound_bytes = plan.lower_bound;
    }
    // Saved activations: written by a forward (or loss) node, read by a backward or update node.
    for (const BufferRequest& r : requests) {
      const Phase made = fn.nodes[r.first].phase;
      const Phase read = fn.nodes[r.last].phase;
      const bool forward_made = made == Phase::kForward || made == Phase::kLoss;
      const bool backward_read = read == Phase::kBackward || read == Phase::kUpdate;
      if (forward_made && backward_read) rep.saved_activation_bytes += r.size;
    }
    spec->functions.push_back(std::move(fs));
  }

  BackendChoiceSummary backends;
  POCK_RETURN_IF_ERROR(choose_backends(options, spec, &backends));

  nlohmann::json j;
  j["producer"] = "pockc 0.1";
  j["memory"] = {{"weights_bytes", rep.weights_bytes},
                 {"trainable_bytes", rep.trainable_bytes},
                 {"optimizer_state_bytes", rep.optimizer_state_bytes},
                 {"saved_activation_bytes", rep.saved_activation_bytes},
                 {"arena_peak_bytes", rep.arena_peak_bytes},
                 {"arena_lower_bound_bytes", rep.arena_lower_bound_bytes},
                 {"persistent_bytes", rep.persistent_bytes}};
  j["op_phases"] = op_phases;
  j["backend_choice"] = {{"profile", backends.profile},
                         {"profiled_ops", backends.profiled},
                         {"requested_ops", backends.requested},
                         {"heuristic_ops", backends.heuristic},
                         {"undecided_ops", backends.undecided}};
  if (!program.metadata.empty()) {
    auto extra = nlohmann::json::parse(program.metadata, nullptr, false);
    if (!extra.is_discarded()) j["source"] = extra;
  }
  rep.json = j.dump();
  spec->metadata = rep.json;
  if (report) *report = rep;
  return Status::ok();
}

}  // namespace pock
