// Every node of every function of a program as one ProgramSpec without data, so that backend
// choice, the profile signatures of `pockc tune` and the layout pass see exactly what the runtime
// will describe.
#pragma once
#include <vector>

#include "blob/program_spec.hpp"
#include "compiler/program.hpp"

namespace pock {

struct DescribedProgram {
  ProgramSpec spec;
  std::vector<Node*> nodes;  // by op index of spec: functions in order, their nodes in order
};

DescribedProgram describe_program(TrainingProgram& program);

// Blob weights as the emitter lays them out (constants, frozen parameters): never written while an
// engine runs.
bool stored_in_weights(const TensorDesc& t);

}  // namespace pock
