// The compiler pipeline: model -> infer/train/eval functions -> passes -> layout -> blob.
#include <fstream>

#include "compiler/compile.hpp"

#include "blob/writer.hpp"
#include "compiler/emit.hpp"
#include "compiler/lowering/fold_pads_into_convs.hpp"
#include "compiler/lowering/lora.hpp"
#include "compiler/recipe.hpp"
#include "compiler/passes/passes.hpp"
#include "compiler/placement/place_ops.hpp"
#include "runtime/backend_set.hpp"
#include "compiler/training.hpp"
#include "pock/compiler/compiler.hpp"

namespace pock {
namespace {

// An inference function over `nodes`: its inputs are the graph inputs they read, in first-use order.
FunctionDef inference_function(const Graph& g, std::string name, std::vector<Node> nodes, std::vector<TensorId> outputs) {
  FunctionDef fn;
  fn.name = std::move(name);
  fn.nodes = std::move(nodes);
  std::vector<bool> seen(g.num_tensors(), false);
  for (const Node& n : fn.nodes) {
    for (TensorId id : n.inputs) {
      if (id != kNoTensor && g.tensor(id).kind == TensorKind::kInput && !seen[id]) {
        seen[id] = true;
        fn.inputs.push_back(id);
      }
    }
  }
  fn.outputs = std::move(outputs);
  return fn;
}

uint64_t planned_bytes(const ProgramSpec& spec) {
  uint64_t total = spec.arena_bytes + spec.persistent_bytes;
  for (const MemorySpaceSpec& s : spec.spaces) total += s.arena_bytes + s.persistent_bytes;
  return total;
}

Status check_memory_budget(const ProgramSpec& spec, uint64_t budget) {
  const uint64_t total = planned_bytes(spec);
  if (budget == 0 || total <= budget) return Status::ok();
  return Status(Code::kOutOfMemory, "the plan needs " + std::to_string(total) + " bytes of arenas and persistent regions (arena " +
                                        std::to_string(spec.arena_bytes) + "), more than the memory budget of " +
                                        std::to_string(budget) + " bytes: lower the batch size or train fewer parameters");
}

}  // namespace

Result<std::vector<uint8_t>> compile(const Graph& model, const Recipe* recipe, const CompileOptions& options,
                                     CompileReport* report) {
  if (model.outputs().empty()) return Status(Code::kInvalidArgument, "the model has no outputs: call mark_output()");
  TrainingProgram program;
  program.graph = model;
  if (recipe) {
    POCK_RETURN_IF_ERROR(validate_recipe(*recipe));
    // Adapters join the model itself, so every function built below runs them.
    POCK_ASSIGN_OR_RETURN(const std::vector<LoraModule> adapted, add_lora_adapters(program.graph, recipe->lora));
    if (!adapted.empty()) program.lora = lora_metadata_json(recipe->lora, adapted);
  }
  // On the model itself, so that every function built from it below has the folded convolutions.
  if (options.optimize) fold_pads_into_convs(program.graph);
  const Graph& g = program.graph;
  program.functions.push_back(inference_function(g, "infer", g.nodes(), g.outputs()));
  if (recipe) POCK_RETURN_IF_ERROR(build_training_functions(program, *recipe, options));
  // Functions beside the model (a decode step) run in inference form over the same weights.
  for (const GraphFunction& f : program.graph.functions()) {
    if (program.function(f.name)) return Status(Code::kInvalidArgument, "the model's function '" + f.name + "' clashes with a compiled one");
    program.functions.push_back(inference_function(program.graph, f.name, f.nodes, f.outputs));
  }
  return compile_program(program, options, report);
}

Result<std::vector<uint8_t>> compile_program(TrainingProgram& program, const CompileOptions& options, CompileReport* report) {
  POCK_RETURN_IF_ERROR(run_passes(program, options));
  const BackendSet backends = BackendSet::open(options.backend_plugins);
  for (const BackendEntry& e : backends.entries()) {
    // The compiler places ops by what the plugins say they run: one that cannot be loaded here
    // would silently change the placement, so it is an error.
    if (!e.status.is_ok()) return e.status;
  }
  PlacementSummary placement;
  const std::vector<pock_backend_v1*> placeable = backends.placeable(options.backend);
  POCK_RETURN_IF_ERROR(place_ops(program, options, placeable, &placement));
  ProgramSpec spec;
  POCK_RETURN_IF_ERROR(emit_program(program, options, &placement, &spec, report));
  POCK_RETURN_IF_ERROR(check_memory_budget(spec, options.memory_budget_bytes));
  std::vector<uint8_t> bytes;
  POCK_RETURN_IF_ERROR(write_blob(spec, &bytes));
  return bytes;
}

Status compile_to_file(const Graph& model, const Recipe* recipe, const std::string& path, const CompileOptions& options,
                       CompileReport* report) {
  auto bytes = compile(model, recipe, options, report);
  if (!bytes.is_ok()) return bytes.status();
  return write_file_atomic(path, bytes->data(), bytes->size());
}

}  // namespace pock
