// Trained weights back into the ONNX model they were compiled from. pock keeps every ONNX
// initializer's name, dtype and shape for its parameters and BatchNorm running statistics
// (docs/onnx.md), and what the compiler does to them leaves that correspondence intact: a
// partial-channel update trains the leading rows of the full tensor, a frozen BatchNorm folded
// into its convolution keeps its trainable shift as the same parameter, MatMul(x, Transpose(W))
// reads W itself. So the export replaces initializers by name, byte for byte, and the source's
// ops compute with them what the trained engine computes.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "pock/status.hpp"
#include "tools/trained_weights.hpp"

namespace pock::tools {

// One protobuf message cannot exceed 2 GiB; this leaves room for the graph around the weights.
inline constexpr uint64_t kOnnxInlineLimit = (uint64_t{2} << 30) - 1 - (uint64_t{64} << 20);

struct OnnxExportOptions {
  // Initializers of 1 KiB or more go to OUT.data beside OUT even when the model would fit in one
  // protobuf (above `inline_limit` bytes it cannot, and they always go there).
  bool external_data = false;
  // Keep BatchNormalization and Dropout in training form (onnx_inference_form.hpp).
  bool keep_training_form = false;
  uint64_t inline_limit = kOnnxInlineLimit;  // tests lower it to reach the external layout cheaply
};

struct OnnxExportReport {
  std::vector<std::string> replaced;       // initializers whose values training changed
  std::vector<std::string> unchanged;      // in the weights, equal to the source's values
  std::vector<std::string> not_in_source;  // tensors of the weights no initializer names
  std::vector<std::string> missing_statistics;  // BatchNorm running statistics the weights lack
  int64_t kept = 0;                        // initializers the weights do not hold, copied
  int inference_form_nodes = 0;            // BatchNormalization and Dropout nodes set to inference form
  std::string external_data;               // the data file written, or empty: self-contained
  uint64_t file_bytes = 0;                 // OUT and its data file
};

class OnnxSource {
 public:
  static Result<OnnxSource> open(const std::string& path);
  OnnxSource(OnnxSource&&) noexcept;
  ~OnnxSource();

  // Matches the tensors of `weights` to initializers by name: gives a checkpoint's tensors their
  // initializer's dtype and shape, refuses a dtype, shape or size that differs (naming the tensor,
  // what the source stores and what the weights hold), and fills the report's name lists.
  Status match(TrainedWeights* weights, OnnxExportReport* report);
  // The source with the changed initializers replaced (after match), written atomically to `out`.
  Status write(const std::string& out, const OnnxExportOptions& options, OnnxExportReport* report);

 private:
  struct Impl;
  explicit OnnxSource(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace pock::tools
