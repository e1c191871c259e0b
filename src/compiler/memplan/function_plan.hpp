// Plans one function's arena in a given node order: arena tensors live from their first write to
// their last read; a view (Reshape and kin, schema is_view) shares its input's buffer; an
// elementwise output takes the buffer of an input that dies at that op with all its views (schema
// inplace_input); then plan_memory packs the buffers. emit.cpp lays out the blob with it and the
// scheduler compares candidate orders with it, so the two can never disagree.
#pragma once
#include <vector>

#include "compiler/memplan/planner.hpp"
#include "pock/compiler/graph.hpp"

namespace pock {

struct FunctionArenaPlan {
  std::vector<TensorId> tensors;         // arena tensors in order of first write
  std::vector<BufferRequest> lifetimes;  // per tensor, before in-place merging
  std::vector<uint64_t> offsets;         // per tensor
  std::vector<size_t> buffer_of;         // per tensor: its merged buffer (views and in-place share one)
  MemoryPlan plan;                       // of the merged buffers
};

// `in_arena[id]`: tensor id is planned into the arena (an intermediate, not a function's I/O).
// An arena tensor read before it is written is a broken invariant: kInternal naming it.
Result<FunctionArenaPlan> plan_function_arena(const Graph& graph, const std::vector<Node>& nodes,
                                              const std::vector<bool>& in_arena);

// Output 0 of node `n` may take the buffer of this input (schema inplace_input), or -1. Whether it
// does depends on lifetimes: the input must die at `n` with the same size and not be read twice.
int inplace_candidate(const Node& n);

// Node `n` is a view (schema is_view): its output may share input 0's buffer while both live.
bool is_view_candidate(const Node& n);

// Per tensor id: some node among `nodes` writes it in place (schema mutated_inputs). A view of such a
// tensor would see the write, so views never share its buffer.
std::vector<bool> tensors_written_in_place(const std::vector<Node>& nodes, size_t num_tensors);

}  // namespace pock
