#pragma once
#include "blob/program_spec.hpp"
#include "compiler/program.hpp"
#include "pock/compiler.hpp"

namespace pock {

// Assigns storage (weights / persistent / arena), plans each function's arena, and fills the
// report. Fails on broken invariants (an arena tensor shared by two functions, a use before def).
Status emit_program(const TrainingProgram& program, const CompileOptions& options, ProgramSpec* spec,
                    CompileReport* report);

}  // namespace pock
