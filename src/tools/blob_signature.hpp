// What a compiled blob expects and offers, read from its program section: each function's
// inputs and outputs, and the parameters. pockc uses it to match .npz arrays to tensors.
#pragma once
#include <string>
#include <vector>

#include "pock/ir.hpp"
#include "pock/status.hpp"

namespace pock::tools {

struct TensorSig {
  std::string name;
  DType dtype = DType::kF32;
  Shape shape;
  bool trainable = false;
};

struct FunctionSig {
  std::string name;
  std::vector<TensorSig> inputs;
  std::vector<TensorSig> outputs;
  bool has_loss = false;
};

struct BlobSignature {
  std::vector<FunctionSig> functions;
  std::vector<TensorSig> parameters;  // every model parameter, trainable or frozen
  const FunctionSig* function(const std::string& name) const;
};

// Reads and verifies the blob at `path`; the error tells how to produce one.
Result<BlobSignature> read_blob_signature(const std::string& path);

}  // namespace pock::tools
