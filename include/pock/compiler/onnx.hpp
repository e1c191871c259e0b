// ONNX frontend: an .onnx file (default-domain opsets 7-23, as torch.onnx.export, tf2onnx and
// jax2onnx write them) becomes a pock::Graph whose parameters keep the initializers' names. Shape
// computations that exporters emit on static shapes (Shape/Gather/Concat/Range chains, Constant,
// Identity, Cast) are folded at import; what cannot be mapped (an unsupported op, a dynamic
// shape, a malformed file) is an error naming the op, the node and the input. docs/onnx.md lists
// the mapping and its limits.
#pragma once
#include <cstddef>
#include <map>
#include <string>

#include "pock/compiler/graph.hpp"
#include "pock/status.hpp"

namespace pock {

struct OnnxImportOptions {
  // Full shapes for model inputs, by input name ("pixel_values" -> {8, 3, 224, 224}). Overrides
  // whatever the file says; needed for every input that has a symbolic or unknown dimension.
  std::map<std::string, Shape> input_shapes;
  // Values for named symbolic dimensions ("batch" -> 8, "seq" -> 128), applied to every input.
  std::map<std::string, int64_t> dim_values;
  // The leading (batch) dimension of every input not listed in input_shapes, whether the file
  // leaves it symbolic or fixes another size (0: as the file says). pockc sets it from the
  // recipe's batch_size, so that exporter shape chains fold for the batch that trains.
  int64_t batch_size = 0;
};

Result<Graph> import_onnx(const std::string& path, const OnnxImportOptions& options = {});
// Same, from bytes in memory. External tensor data is resolved relative to `base_dir`.
Result<Graph> import_onnx_bytes(const void* data, size_t size, const OnnxImportOptions& options = {},
                                const std::string& base_dir = ".");

// Parses "NAME=d0,d1,..." (an --input-shape argument) into `options`. "NAME=batch:8" style is not
// accepted; symbolic names are set with "@batch=8" (a name starting with '@' is a dimension).
Status parse_input_shape_arg(const std::string& arg, OnnxImportOptions* options);

}  // namespace pock
