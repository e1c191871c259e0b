// The second half of compile() (pock/compiler/compiler.hpp): from a program whose functions are
// built, through the passes and placement, to the blob. Tests that rewrite a program's functions
// (tests/compiler) compile it with this.
#pragma once
#include <cstdint>
#include <vector>

#include "compiler/program.hpp"
#include "pock/compiler/compiler.hpp"

namespace pock {

Result<std::vector<uint8_t>> compile_program(TrainingProgram& program, const CompileOptions& options,
                                             CompileReport* report = nullptr);

}  // namespace pock
