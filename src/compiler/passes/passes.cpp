#include "compiler/passes/passes.hpp"

#include "compiler/passes/layout_nhwc.hpp"

namespace pock {

// Order: fold first (it turns shape arithmetic into constants), then CSE (folded constants expose
// duplicates), then DCE (removes what both left unused). Then the fusions, over the cleaned
// functions: BatchNorm folding and bias adds (until neither finds more), then activations, which
// must come last because a fused activation ends every other pattern. Update
// reordering next, and the memory schedule last: it compares against the order reordering made.
namespace {

// Lowerings that mark only FunctionDef::backward_begin get per-node phases here, before any pass
// moves nodes around; later stages read Node::phase.
void derive_phases(FunctionDef& fn) {
  if (fn.backward_begin < 0) return;
  for (const Node& n : fn.nodes) {
    if (n.phase != Phase::kForward) return;  // the lowering tagged phases itself
  }
  for (size_t k = static_cast<size_t>(fn.backward_begin); k < fn.nodes.size(); ++k) {
    fn.nodes[k].phase = has_side_effects(fn.nodes[k]) ? Phase::kUpdate : Phase::kBackward;
  }
}

}  // namespace

bool updates_reordered(const CompileOptions& options) {
  if (options.reorder_updates) return *options.reorder_updates;
  const bool host_backend = options.backend.empty() || options.backend == "cpu" || options.backend == "ref" ||
                            options.backend == "neon";
  return !host_backend || !options.backend_plugins.empty();
}

Status run_passes(TrainingProgram& program, const CompileOptions& options, PassStats* stats) {
  PassStats s;
  for (FunctionDef& fn : program.functions) {
    derive_phases(fn);
    if (options.optimize) {
      auto folded = fold_constants(program, fn);
      if (!folded.is_ok()) return folded.status();
      s.folded_constants += folded.value();
      s.merged_common += eliminate_common_subexpressions(program, fn);
      s.removed_dead += eliminate_dead_code(program, fn);
    }
  }
  if (options.optimize) {
    // Each enables the other (conv-Add-BN, conv-BN-Add); every round removes nodes, so it ends.
    for (int found = 1; found > 0;) {
      const int folded = fold_batchnorms(program);
      const int fused = fuse_bias_adds(program);
      s.folded_batchnorms += folded;
      s.fused_bias_adds += fused;
      found = folded + fused;
    }
    s.fused_activations += fuse_activations(program);
    // After the fusions (a fused activation is part of its conv), before the schedule (new nodes).
    if (layout_pass_applies(options)) POCK_RETURN_IF_ERROR(choose_layouts(program, options.profile_path).status());
  }
  const bool reorder = updates_reordered(options);
  for (FunctionDef& fn : program.functions) {
    if (reorder) s.moved_updates += reorder_updates(program, fn);
    if (options.memory_schedule) {
      const ScheduleResult r = schedule_for_memory(program, fn, reorder);
      s.rescheduled_functions += r.reordered;
      s.scheduled_bytes_saved += r.peak_before - r.peak_after;
    }
    // Last: the schedule would move a recomputation up to its input, where it saves nothing.
    if (options.optimize) recompute_activations(program, fn);
  }
  if (stats) *stats = s;
  return Status::ok();
}

}  // namespace pock
