#include "compiler/emit.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <unordered_map>

#include "compiler/backend_choice.hpp"
#include "compiler/memplan/function_plan.hpp"
#include "compiler/sparse/partial_channels.hpp"
#include "ir/op_schema.hpp"

namespace pock {
namespace {

uint64_t align64(uint64_t v) { return (v + 63) / 64 * 64; }

// One letter per Phase, in enum order: the metadata's "op_phases" string (docs/blob-format.md).
char phase_letter(Phase phase) { return "FLBU"[static_cast<int>(phase)]; }

}  // namespace

Status emit_program(const TrainingProgram& program, const CompileOptions&, const PlacementSummary* placement,
                    ProgramSpec* spec, CompileReport* report) {
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
  // Optimizer state: the state tensors the update nodes read (moments, momentum buffers, gradient
  // accumulators), not the BatchNorm running statistics, which are state of the model.
  std::vector<bool> read_by_update(nt, false);
  for (const FunctionDef& fn : program.functions) {
    for (const Node& n : fn.nodes) {
      if (n.phase != Phase::kUpdate) continue;
      for (TensorId id : n.inputs) {
        if (id != kNoTensor) read_by_update[id] = true;
      }
    }
  }

  spec->tensors.clear();
  spec->tensors.resize(order.size());
  const size_t num_spaces = 1 + program.memory_spaces.size();
  std::vector<uint64_t> persistent(num_spaces, 0);  // by memory space
  CompileReport rep;
  // Small f32 weights (norm scales, biases) first, block-quantized and large ones after them. An
  // engine reads weights from the mapped file, whose pages come in folios of up to 2 MB:
  // interleaved, each small weight a step reads keeps the folio of its neighbours resident, blocks
  // that int8 kernels never read again once they repacked them (58 MB of SmolLM2's blob).
  constexpr size_t kLargeWeight = size_t{1} << 20;
  std::vector<size_t> late_weights;
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
    t.space = program.space_of(order[i]);
    const bool has_data = d.data && !d.data->empty();
    if (has_data && d.data->size() != t.nbytes) {
      return Status(Code::kInvalidArgument, "tensor '" + d.name + "' holds " + std::to_string(d.data->size()) +
                                                " bytes of data but its shape needs " + std::to_string(t.nbytes));
    }
    switch (d.kind) {
      case TensorKind::kParameter:
        rep.weights_bytes += t.nbytes;
        if (d.trainable) {
          // A partial-channel update trains only the leading rows: count those, as the optimizer
          // state (shaped like the gradient) and pockc inspect's trainable elements do.
          const int64_t rows = trained_rows(d);
          rep.trainable_bytes += rows > 0 ? t.nbytes / static_cast<uint64_t>(d.shape[0]) * static_cast<uint64_t>(rows)
                                          : t.nbytes;
          t.storage = Storage::kPersistent;
          t.checkpointed = true;
        } else {
          t.storage = Storage::kWeights;
        }
        break;
      case TensorKind::kState:
        t.storage = Storage::kPersistent;
        t.checkpointed = !d.cache;
        if (order[i] != program.step && read_by_update[order[i]]) rep.optimizer_state_bytes += t.nbytes;
        break;
      case TensorKind::kConstant:
        // A device's replica of a weight lives in that device's persistent region, filled at open.
        t.storage = t.space == 0 ? Storage::kWeights : Storage::kPersistent;
        t.constant = t.space != 0;
        break;
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
      if (has_data && (d.dtype == DType::kU8 || t.nbytes >= kLargeWeight)) {
        late_weights.push_back(i);
      } else {
        t.offset = spec->add_weight(has_data ? d.data->data() : nullptr, t.nbytes);
      }
    } else if (t.storage == Storage::kPersistent) {
      t.offset = persistent[t.space];
      persistent[t.space] += align64(t.nbytes);
      if (has_data) {
        t.has_init = true;
        t.init_offset = spec->add_weight(d.data->data(), t.nbytes);
      }
    }
  }
  for (size_t i : late_weights) spec->tensors[i].offset = spec->add_weight(g.tensor(order[i]).data->data(), spec->tensors[i].nbytes);
  spec->persistent_bytes = persistent[0];
  rep.persistent_bytes = persistent[0];
  spec->spaces.clear();
  for (size_t s = 1; s < num_spaces; ++s) {
    spec->spaces.push_back({program.memory_spaces[s - 1], 0, persistent[s]});
    rep.persistent_bytes += persistent[s];
  }
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
    for (size_t k = 0; k < fn.nodes.size(); ++k) {
      const Node& n = fn.nodes[k];
      OpSpec op;
      op.op = n.op;
      op.name = n.name;
      op.attrs = n.attrs;
      op.backend = n.backend;
      for (TensorId id : n.inputs) op.inputs.push_back(id == kNoTensor ? -1 : remap[id]);
      for (TensorId id : n.outputs) op.outputs.push_back(remap[id]);
      fs.ops.push_back(static_cast<uint32_t>(spec->ops.size()));
      op_phases.push_back(phase_letter(n.phase));
      spec->ops.push_back(std::move(op));
    }
    // One arena per memory space: the host's, then each device's.
    const bool headline = fn.name == "train" || (fn.name == "infer" && rep.arena_peak_bytes == 0);
    if (headline) rep.arena_peak_bytes = rep.arena_lower_bound_bytes = 0;
    for (size_t space = 0; space < num_spaces; ++space) {
      std::vector<bool> in_arena(g.num_tensors(), false);
      for (size_t id = 0; id < g.num_tensors(); ++id) {
        in_arena[id] = remap[id] >= 0 && spec->tensors[remap[id]].storage == Storage::kArena &&
                       spec->tensors[remap[id]].space == space;
      }
      auto arena = plan_function_arena(g, fn.nodes, in_arena);
      if (!arena.is_ok()) return Status(arena.status().code(), "function '" + fn.name + "': " + arena.status().message());
      const MemoryPlan& plan = arena->plan;
      for (size_t r = 0; r < arena->tensors.size(); ++r) spec->tensors[remap[arena->tensors[r]]].offset = arena->offsets[r];
      if (space == 0) {
        fs.arena_bytes = plan.peak;
        spec->arena_bytes = std::max(spec->arena_bytes, plan.peak);
      } else {
        uint64_t& bytes = spec->spaces[space - 1].arena_bytes;
        bytes = std::max(bytes, plan.peak);
      }
      if (headline) {
        rep.arena_peak_bytes += plan.peak;
        rep.arena_lower_bound_bytes += plan.lower_bound;
      }
      // Saved activations: written by a forward (or loss) node, read by a backward or update node.
      // A view shares its input's buffer: count each buffer once.
      std::vector<bool> counted(arena->plan.offsets.size(), false);
      for (size_t t = 0; t < arena->lifetimes.size(); ++t) {
        const BufferRequest& r = arena->lifetimes[t];
        const Phase made = fn.nodes[r.first].phase;
        const Phase read = fn.nodes[r.last].phase;
        const bool forward_made = made == Phase::kForward || made == Phase::kLoss;
        const bool backward_read = read == Phase::kBackward || read == Phase::kUpdate;
        if (!forward_made || !backward_read || counted[arena->buffer_of[t]]) continue;
        counted[arena->buffer_of[t]] = true;
        rep.saved_activation_bytes += r.size;
      }
    }
    spec->functions.push_back(std::move(fs));
  }

  const PlacementSummary none;
  const BackendChoiceSummary& backends = (placement ? *placement : none).choice;

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
  if (!spec->spaces.empty()) {
    nlohmann::json spaces = nlohmann::json::array();
    for (const MemorySpaceSpec& s : spec->spaces) {
      spaces.push_back({{"backend", s.backend}, {"arena_bytes", s.arena_bytes}, {"persistent_bytes", s.persistent_bytes}});
    }
    j["memory_spaces"] = spaces;
    j["copies"] = placement ? placement->copies : 0;
    j["moved_to_host"] = placement ? placement->moved_to_host : 0;
  }
  if (!program.lora.empty()) j["lora"] = nlohmann::json::parse(program.lora, nullptr, false);
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
