// Graph optimizations over a program's functions. Each pass is a function of one function body;
// run_passes applies them in a fixed order (see passes.cpp for why that order).
#pragma once
#include "compiler/program.hpp"
#include "pock/compiler.hpp"

namespace pock {

struct PassStats {
  int removed_dead = 0;
  int merged_common = 0;
  int folded_constants = 0;
  int moved_updates = 0;
};

Status run_passes(TrainingProgram& program, const CompileOptions& options, PassStats* stats = nullptr);

// Individual passes (exposed for tests).
int eliminate_dead_code(const TrainingProgram& program, FunctionDef& fn);
int eliminate_common_subexpressions(TrainingProgram& program, FunctionDef& fn);
Result<int> fold_constants(TrainingProgram& program, FunctionDef& fn);
// Moves every optimizer update (a node that mutates a trainable parameter) to right after the
// last node it depends on, so gradient buffers die as soon as they are consumed.
int reorder_updates(const TrainingProgram& program, FunctionDef& fn);

// True when the op writes any of its inputs in place (optimizer updates, running statistics).
bool has_side_effects(const Node& node);

}  // namespace pock
