// The arena peak that emit.cpp will plan for one function in a given node order, computed the same
// way (arena tensors, lifetimes from first write to last read, in-place reuse of a dying input by
// an elementwise output, then plan_memory). The scheduler compares candidate orders with it.
#pragma once
#include <cstdint>
#include <vector>

#include "compiler/program.hpp"

namespace pock {

// Per tensor: true when emit places it in the arena (an intermediate that no function takes as an
// input or hands back as an output or loss).
std::vector<bool> arena_resident(const TrainingProgram& program);

struct ArenaEstimate {
  uint64_t peak = 0;         // what plan_memory packs the buffers into
  uint64_t lower_bound = 0;  // the largest total of simultaneously live buffers
};

ArenaEstimate estimate_arena(const Graph& g, const std::vector<Node>& nodes, const std::vector<bool>& in_arena);

// Output 0 of node `n` may take the buffer of this input (schema inplace_input), or -1. Whether it
// does depends on lifetimes: the input must die at `n` with the same size and not be read twice.
int inplace_candidate(const Node& n);

}  // namespace pock
