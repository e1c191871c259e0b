// ONNX frontend: an .onnx file (default-domain opsets 7-23, as torch.onnx.export, tf2onnx and
// jax2onnx write them) becomes a pock::Graph whose parameters keep the initializers' names. Shape
// computations that exporters emit on static shapes (Shape/Gather/Concat/Range chains, Constant,
// Identity, Cast) are folded at import; what cannot be mapped (an unsupported op, a dynamic
// shape, a malformed file) is an error naming the op, the node and the input. docs/onnx.md lists
// the mapping and its limits.
#pragma once
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "pock/compiler/graph.hpp"
#include "pock/status.hpp"

namespace pock {

// A value a graph input takes at compile time ("binding"): operands pock needs as constants (a
// Reshape's shape, Slice's starts, Resize's scales, ...) may be graph inputs in the file; an app
// that always feeds the same value binds it once. The bound input becomes a constant that is not
// trainable: it leaves the blob's inputs, and folding sees its value.
struct OnnxBoundValue {
  // Typed form (a .npy file, an API caller): must match the input's declared dtype and shape.
  DType dtype = DType::kI64;
  Shape shape;
  std::vector<uint8_t> bytes;  // numel(shape) values of dtype, little-endian
  // Text form ("--bind NAME=v0,v1,...", "NAME=" for no values): when set, the values are read in
  // the input's declared dtype (int64 when the file declares none), as a 1-D tensor, or a scalar
  // for an input declared rank 0; dtype, shape and bytes above are then ignored.
  std::optional<std::vector<std::string>> literal;
};

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
  // Graph inputs bound to values at compile time, by input name.
  std::map<std::string, OnnxBoundValue> bound_inputs;
};

// What a refused import can say beyond its Status, for callers that act on the refusal.
struct OnnxImportRefusal {
  // The graph input an operand needs at compile time, when that is why the import was refused:
  // binding it (OnnxImportOptions::bound_inputs) is the way out.
  std::string input_to_bind;
};

Result<Graph> import_onnx(const std::string& path, const OnnxImportOptions& options = {});
// Same; when the import is refused, `refusal` (if not null) says more.
Result<Graph> import_onnx(const std::string& path, const OnnxImportOptions& options, OnnxImportRefusal* refusal);
// Same, from bytes in memory. External tensor data is resolved relative to `base_dir`.
Result<Graph> import_onnx_bytes(const void* data, size_t size, const OnnxImportOptions& options = {},
                                const std::string& base_dir = ".", OnnxImportRefusal* refusal = nullptr);

// Parses "NAME=d0,d1,..." (an --input-shape argument) into `options`. "NAME=batch:8" style is not
// accepted; symbolic names are set with "@batch=8" (a name starting with '@' is a dimension).
Status parse_input_shape_arg(const std::string& arg, OnnxImportOptions* options);
// Parses "NAME=v0,v1,..." (a --bind argument in text form) into options->bound_inputs.
Status parse_bind_arg(const std::string& arg, OnnxImportOptions* options);

}  // namespace pock
