#include "sample_files.hpp"

#include <utility>

namespace personalize {
namespace {

// File size by seeking: the files are plain binary, so this is the byte count.
int64_t file_size(std::FILE* f) {
  if (std::fseek(f, 0, SEEK_END) != 0) return -1;
  const long size = std::ftell(f);
  std::rewind(f);
  return size;
}

pock::Status io_error(const std::string& what) { return pock::Status(pock::Code::kIo, what); }

}  // namespace

pock::Result<SampleFiles> SampleFiles::open(const std::string& prefix, int64_t sample_floats) {
  SampleFiles files;
  files.prefix_ = prefix;
  files.sample_floats_ = sample_floats;
  const std::string x_path = prefix + ".x.f32", label_path = prefix + ".label.i64";
  files.x_ = std::fopen(x_path.c_str(), "rb");
  if (!files.x_) return io_error("cannot open " + x_path);
  files.labels_ = std::fopen(label_path.c_str(), "rb");
  if (!files.labels_) return io_error("cannot open " + label_path);
  const int64_t sample_bytes = sample_floats * static_cast<int64_t>(sizeof(float));
  const int64_t x_bytes = file_size(files.x_), label_bytes = file_size(files.labels_);
  if (sample_bytes <= 0 || x_bytes < 0 || x_bytes % sample_bytes != 0) {
    return io_error(x_path + ": " + std::to_string(x_bytes) + " bytes is not a whole number of samples of " +
                    std::to_string(sample_bytes) + " bytes (was it written for another input size?)");
  }
  files.count_ = x_bytes / sample_bytes;
  if (label_bytes != files.count_ * static_cast<int64_t>(sizeof(int64_t))) {
    return io_error(label_path + ": expected " + std::to_string(files.count_) + " int64 labels, found " +
                    std::to_string(label_bytes) + " bytes");
  }
  return files;
}

SampleFiles::SampleFiles(SampleFiles&& other) noexcept { *this = std::move(other); }

SampleFiles& SampleFiles::operator=(SampleFiles&& other) noexcept {
  std::swap(x_, other.x_);
  std::swap(labels_, other.labels_);
  prefix_ = std::move(other.prefix_);
  sample_floats_ = other.sample_floats_;
  count_ = other.count_;
  return *this;
}

SampleFiles::~SampleFiles() {
  if (x_) std::fclose(x_);
  if (labels_) std::fclose(labels_);
}

pock::Status SampleFiles::read(const std::vector<int64_t>& indices, float* x, int64_t* labels) {
  const size_t n = static_cast<size_t>(sample_floats_);
  for (size_t i = 0; i < indices.size(); ++i) {
    const int64_t k = indices[i];
    if (k < 0 || k >= count_) return io_error(prefix_ + ": sample " + std::to_string(k) + " out of range");
    const bool ok = std::fseek(x_, static_cast<long>(k * sample_floats_ * 4), SEEK_SET) == 0 &&
                    std::fread(x + i * n, sizeof(float), n, x_) == n &&
                    std::fseek(labels_, static_cast<long>(k * 8), SEEK_SET) == 0 &&
                    std::fread(labels + i, sizeof(int64_t), 1, labels_) == 1;
    if (!ok) return io_error(prefix_ + ": cannot read sample " + std::to_string(k));
  }
  return pock::Status::ok();
}

}  // namespace personalize
