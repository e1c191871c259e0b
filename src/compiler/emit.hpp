#pragma once
#include "blob/program_spec.hpp"
#include "compiler/placement/place_ops.hpp"
#include "compiler/program.hpp"
#include "pock/compiler/compiler.hpp"

namespace pock {

// Assigns storage (weights / persistent / arena) in each tensor's memory space, plans each
// function's arena per space, records each node's backend (place_ops; `placement` summarizes it,
// null when placement did not run), and fills the report. Fails on broken invariants (an arena
// tensor shared by two functions, a use before def).
Status emit_program(const TrainingProgram& program, const CompileOptions& options, const PlacementSummary* placement,
                    ProgramSpec* spec, CompileReport* report);

}  // namespace pock
