// What a compiled blob expects and offers, read from its program section: each function's
// inputs and outputs, and the parameters. pockc uses it to match .npz arrays to tensors.
#pragma once
#include <string>
#include <vector>

#include "blob/reader.hpp"
#include "pock/compiler/ir.hpp"
#include "pock/status.hpp"
#include "runtime/mapped_file.hpp"

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

// Maps the blob at `path` read-only and verifies it into `view` (valid while `file` lives). Mapped,
// not read into memory: only the pages verification touches become resident, and they are the
// file's, dropped with the mapping. Errors name the path and tell how to produce a blob.
Status map_blob(const std::string& path, const VerifyOptions& options, MappedFile* file, BlobView* view);

// Reads and verifies the blob's program at `path` (not its weights: the engine checks those when
// it opens the blob, so a 550 MB blob's weights are not touched twice).
Result<BlobSignature> read_blob_signature(const std::string& path);

}  // namespace pock::tools
