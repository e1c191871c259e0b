// Moves samples from the app's files into the engine's inputs: the image batch into the model
// input and the labels into the loss's label input, in whichever integer type the blob wants.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "pock/engine.hpp"
#include "sample_files.hpp"

namespace personalize {

struct InputNames {
  std::string x = "x";
  std::string label = "label";
};

class BatchFeed {
 public:
  // Reads the batch size and the sample size from the blob's input "x".
  static pock::Result<BatchFeed> create(pock::Engine& engine, const InputNames& names);

  int64_t batch_size() const { return batch_; }
  int64_t sample_floats() const { return sample_floats_; }
  // Reads `indices` (exactly batch_size of them) and sets the model input; with `with_labels`
  // also the label input. The labels read stay available through labels().
  pock::Status feed(pock::Engine& engine, SampleFiles& files, const std::vector<int64_t>& indices, bool with_labels);
  const std::vector<int64_t>& labels() const { return labels_; }

 private:
  InputNames names_;
  int64_t batch_ = 0;
  int64_t sample_floats_ = 0;
  std::vector<float> x_;
  std::vector<int64_t> labels_;
  std::vector<int32_t> labels_i32_;
};

}  // namespace personalize
