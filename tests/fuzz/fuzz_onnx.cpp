// Fuzz target: import an ONNX model from bytes; a model that imports is compiled for inference.
#include <cstdint>

#include "pock/compiler/compiler.hpp"
#include "pock/compiler/onnx.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  pock::Result<pock::Graph> graph = pock::import_onnx_bytes(data, size);
  if (graph.is_ok()) (void)pock::compile(graph.value(), nullptr);
  return 0;
}
