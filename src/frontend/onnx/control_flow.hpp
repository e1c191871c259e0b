// Inlines ONNX control flow (If, Scan, Loop) into the graph before the converters run: pock
// compiles one static graph, so a loop is unrolled over a length known before import and an If
// becomes its branch.
//
// - If with a constant condition (an initializer or Constant node): the chosen branch's nodes.
//   With a condition computed at run time: both branches, and a private select node per output
//   (kBranchSelectOp) that the importer turns into Where once it knows both outputs have one type.
// - Scan (opsets 8 and 9+): the body once per element along each scan axis, whose length comes
//   from a static shape in the file (graph input, initializer, value_info) or --input-shape; scan
//   outputs are stacked with Unsqueeze and Concat.
// - Loop: unrolled when the trip count is a constant and the loop cannot stop early (no
//   condition, or a constant true one the body passes through unchanged); a trip count or
//   condition fed as a graph input can be bound to a value at compile time.
// Bodies are checked against ONNX's schemas and rewritten to the canonical form
// (opset_adapters.hpp) first; their nodes get names prefixed by the loop node and iteration, so
// error messages still say where a node came from. Nested control flow inside a body is refused.
#pragma once
#include <onnx/onnx_pb.h>

#include <string>

#include "pock/compiler/onnx.hpp"
#include "pock/status.hpp"

namespace pock::onnx_import {

// The op the If inliner emits: inputs (cond, then_value, else_value), one output.
inline constexpr char kBranchSelectOp[] = "If.select";

// `graph` is in canonical form at `opset`; rewritten in place (untouched when it has no control
// flow, so a large model's initializers are never copied).
// A trip count or condition read from a graph input may be bound (OnnxImportOptions::bound_inputs);
// when the refusal is that such an input is unbound, `input_to_bind` names it.
Status inline_control_flow(onnx::GraphProto* graph, int64_t opset, const OnnxImportOptions& options,
                           const std::string& base_dir, std::string* input_to_bind);

}  // namespace pock::onnx_import
