// The arena peak that emit.cpp will plan for one function in a given node order (both go through
// plan_function_arena). The scheduler compares candidate orders with it.
#pragma once
#include <cstdint>
#include <vector>

#include "compiler/memplan/function_plan.hpp"
#include "compiler/program.hpp"

namespace pock {

// Per tensor: true when emit places it in the arena (an intermediate that no function takes as an
// input or hands back as an output or loss).
std::vector<bool> arena_resident(const TrainingProgram& program);

struct ArenaEstimate {
  uint64_t peak = 0;         // what plan_memory packs the buffers into (UINT64_MAX: invalid order)
  uint64_t lower_bound = 0;  // the largest total of simultaneously live buffers
};

ArenaEstimate estimate_arena(const Graph& g, const std::vector<Node>& nodes, const std::vector<bool>& in_arena);

}  // namespace pock
