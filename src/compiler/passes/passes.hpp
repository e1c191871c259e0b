// Graph optimizations over a program's functions. Each pass is a function of one function body;
// run_passes applies them in a fixed order (see passes.cpp for why that order).
#pragma once
#include "compiler/program.hpp"
#include "pock/compiler/compiler.hpp"

namespace pock {

struct PassStats {
  int removed_dead = 0;
  int merged_common = 0;
  int folded_constants = 0;
  int moved_updates = 0;
  int folded_batchnorms = 0;
  int fused_bias_adds = 0;
  int fused_activations = 0;
  int rescheduled_functions = 0;  // functions whose node order the memory schedule changed
  uint64_t scheduled_bytes_saved = 0;  // sum over functions of the arena peak it removed
};

Status run_passes(TrainingProgram& program, const CompileOptions& options, PassStats* stats = nullptr);

// CompileOptions::reorder_updates as given, or when unset: true where the updates may run on a
// device or plugin backend (options.backend names one, or plugins are loaded), false otherwise.
bool updates_reordered(const CompileOptions& options);

// Individual passes (exposed for tests).
int eliminate_dead_code(const TrainingProgram& program, FunctionDef& fn);
int eliminate_common_subexpressions(TrainingProgram& program, FunctionDef& fn);
Result<int> fold_constants(TrainingProgram& program, FunctionDef& fn);
// Moves every optimizer update (a node that mutates a trainable parameter) to right after the
// last node it depends on, so gradient buffers die as soon as they are consumed.
int reorder_updates(const TrainingProgram& program, FunctionDef& fn);
// Recomputes Silu outputs that the backward reads from the inputs it keeps anyway; returns how many.
int recompute_activations(TrainingProgram& program, FunctionDef& fn);

// Fusions over every function of the program (fusion runs after autodiff: gradient rules never see
// a fused node). Each returns how many patterns it rewrote.
// Inference-form BatchNorm after a frozen Conv2d -> that Conv2d with new constant weight and bias.
int fold_batchnorms(TrainingProgram& program);
// Conv2d / Linear followed by an Add of a per-output-channel value -> the value in the bias.
int fuse_bias_adds(TrainingProgram& program);
// Conv2d / Linear followed by Relu / Relu6 -> the op with attribute activation="relu" | "relu6".
int fuse_activations(TrainingProgram& program);

// Reorders the function's nodes to lower its planned arena peak (schedule.cpp); keeps the order
// it was given unless the new one plans smaller. With updates_early, optimizer updates run as
// soon as they are ready; without, they stay after every other node.
struct ScheduleResult {
  uint64_t peak_before = 0, peak_after = 0;
  bool reordered = false;
};
ScheduleResult schedule_for_memory(const TrainingProgram& program, FunctionDef& fn, bool updates_early);

// True when the op writes any of its inputs in place (optimizer updates, running statistics).
bool has_side_effects(const Node& node);

}  // namespace pock
