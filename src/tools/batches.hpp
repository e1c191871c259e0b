// Batches from .npz arrays: every array named after a function input holds samples along its
// leading axis; batch k of an epoch is samples [k*B, (k+1)*B) of the epoch's order (the file's
// order, or a seeded shuffle). A trailing partial batch is skipped, as PyTorch's drop_last does.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "pock/engine.hpp"
#include "tools/blob_signature.hpp"
#include "tools/npz.hpp"

namespace pock::tools {

class BatchFeeder {
 public:
  // Checks names, shapes and dtypes of every input against `data`; `purpose` ("train", "infer")
  // goes into the messages.
  static Result<BatchFeeder> create(const NpzFile& data, const std::vector<TensorSig>& inputs, const std::string& purpose);

  int64_t num_samples() const { return num_samples_; }
  int64_t batch_size() const { return batch_size_; }
  int64_t batches_per_epoch() const { return num_samples_ / batch_size_; }

  // Sets every input of `engine` to batch number `step` (counting across epochs); with a shuffle
  // seed each epoch visits the samples in its own order.
  Status feed(Engine& engine, int64_t step);
  void set_shuffle(uint64_t seed) {
    shuffle_ = true;
    seed_ = seed;
  }

 private:
  struct Slot {
    TensorSig sig;
    std::vector<uint8_t> data;  // converted to sig.dtype; all samples
    size_t sample_bytes = 0;    // 0: not batched (fed whole every step)
    std::vector<uint8_t> staging;
  };
  void order_for_epoch(int64_t epoch);

  std::vector<Slot> slots_;
  int64_t num_samples_ = 0;
  int64_t batch_size_ = 1;
  bool shuffle_ = false;
  uint64_t seed_ = 0;
  int64_t epoch_ = -1;
  std::vector<int64_t> order_;
};

}  // namespace pock::tools
