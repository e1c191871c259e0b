#include "compiler/passes/passes.hpp"

namespace pock {

// Order: fold first (it turns shape arithmetic into constants), then CSE (folded constants expose
// duplicates), then DCE (removes what both left unused), and reordering last since it only moves
// the surviving update nodes.
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
    if (options.reorder_updates) s.moved_updates += reorder_updates(program, fn);
  }
  if (stats) *stats = s;
  return Status::ok();
}

}  // namespace pock
