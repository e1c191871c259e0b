// Backend placement and memory spaces (DESIGN.md §3), run after the passes and before emit:
//  1. every node of every function gets a backend by backend_choice.hpp's rules, from what each
//     backend of the compile-time set (built-ins and CompileOptions::backend_plugins) says it
//     supports — never from a backend's own headers;
//  2. a backend that keeps tensors in memory of its own (alloc/free/copy) makes a memory space;
//     each tensor gets one home space: where the nodes that write it run (host for what the caller
//     sets or reads: function inputs, outputs and losses, which therefore stay host memory);
//     tensors written from two spaces move their writers to the best host backend;
//  3. a node that reads a tensor from another space reads a copy made by a Copy node inserted just
//     before it (one per function until the tensor is written again), and a device node that
//     writes a function output writes a device twin that a Copy brings back; frozen weights and
//     constants get a replica in each space that reads them, initialised when the engine opens, so
//     a step copies no weights.
// With no backend of its own memory in play this only records each node's backend.
#pragma once
#include <cstdint>
#include <vector>

#include "compiler/backend_choice.hpp"
#include "compiler/program.hpp"

namespace pock {

struct PlacementSummary {
  BackendChoiceSummary choice;
  int64_t copies = 0;          // Copy nodes inserted, over all functions
  int64_t moved_to_host = 0;   // nodes moved off a device because a tensor they write is written elsewhere too
};

Status place_ops(TrainingProgram& program, const CompileOptions& options, const std::vector<pock_backend_v1*>& backends,
                 PlacementSummary* summary);

}  // namespace pock
