// The app's own data as it would sit on a device: images and labels in two raw files, read a
// batch at a time so that the training set never has to fit in memory (and the process's peak
// memory shows what the engine needs, not the size of the data set).
//
//   PREFIX.x.f32      N samples of float32, little-endian, each as the model's input expects
//   PREFIX.label.i64  N labels of int64, little-endian
#pragma once
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "pock/status.hpp"

namespace personalize {

class SampleFiles {
 public:
  // `sample_floats`: floats per sample (the model input's size without the batch dimension).
  static pock::Result<SampleFiles> open(const std::string& prefix, int64_t sample_floats);

  SampleFiles(SampleFiles&& other) noexcept;
  SampleFiles& operator=(SampleFiles&& other) noexcept;
  SampleFiles(const SampleFiles&) = delete;
  SampleFiles& operator=(const SampleFiles&) = delete;
  ~SampleFiles();

  int64_t size() const { return count_; }
  // Copies the samples at `indices` into `x` (indices.size() * sample_floats floats) and their
  // labels into `labels`.
  pock::Status read(const std::vector<int64_t>& indices, float* x, int64_t* labels);

 private:
  SampleFiles() = default;
  std::FILE* x_ = nullptr;
  std::FILE* labels_ = nullptr;
  std::string prefix_;
  int64_t sample_floats_ = 0;
  int64_t count_ = 0;
};

}  // namespace personalize
