// Builds the "train" and "eval" functions of a program from its forward model and a recipe:
// train-mode forward, loss, reverse-mode gradients (pruned by sparse BP), optimizer updates.
#pragma once
#include "compiler/program.hpp"
#include "pock/compiler/compiler.hpp"

namespace pock {

Status build_training_functions(TrainingProgram& program, const Recipe& recipe, const CompileOptions& options);

}  // namespace pock
