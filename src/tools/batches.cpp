#include "tools/batches.hpp"
#include "ir/splitmix64.hpp"

#include <cstring>
#include <numeric>

namespace pock::tools {
namespace {

std::string names_of(const NpzFile& data) {
  std::string s;
  for (const auto& [name, a] : data) s += (s.empty() ? "" : ", ") + name + " " + shape_str(a.shape);
  return s.empty() ? "(none)" : s;
}


}  // namespace

Result<BatchFeeder> BatchFeeder::create(const NpzFile& data, const std::vector<TensorSig>& inputs, const std::string& purpose) {
  BatchFeeder f;
  int64_t samples = -1;
  std::string first;
  for (const TensorSig& sig : inputs) {
    auto it = data.find(sig.name);
    if (it == data.end()) {
      return Status(Code::kNotFound, "the data has no array '" + sig.name + "' (" + purpose + " input " + shape_str(sig.shape) +
                                         " " + dtype_name(sig.dtype) + "); it has: " + names_of(data));
    }
    const NpyArray& a = it->second;
    Slot slot;
    slot.sig = sig;
    POCK_ASSIGN_OR_RETURN(slot.data, convert_to(a, sig.dtype, sig.name));
    int64_t n = 0;
    if (sig.shape.empty()) {
      if (!a.shape.empty()) return Status(Code::kShapeMismatch, "array '" + sig.name + "' must be a scalar");
    } else {
      const Shape per_sample(sig.shape.begin() + 1, sig.shape.end());
      const bool whole = a.shape == sig.shape;
      const bool stacked = a.shape.size() == sig.shape.size() && Shape(a.shape.begin() + 1, a.shape.end()) == per_sample;
      if (!whole && !stacked) {
        return Status(Code::kShapeMismatch, "array '" + sig.name + "' is " + shape_str(a.shape) + ", but the " + purpose +
                                                " input is " + shape_str(sig.shape) + ": give [N" +
                                                shape_str(per_sample).replace(0, 1, per_sample.empty() ? "" : ", ") +
                                                " with N samples (a multiple of the batch " + std::to_string(sig.shape[0]) +
                                                " for infer)");
      }
      n = a.shape[0];
      slot.sample_bytes = static_cast<size_t>(numel(per_sample)) * dtype_size(sig.dtype);
      slot.staging.resize(slot.sample_bytes * static_cast<size_t>(sig.shape[0]));
      if (samples >= 0 && n != samples) {
        return Status(Code::kShapeMismatch, "arrays '" + first + "' and '" + sig.name + "' hold different sample counts (" +
                                                std::to_string(samples) + " vs " + std::to_string(n) + ")");
      }
      if (samples < 0) {
        samples = n;
        first = sig.name;
        f.batch_size_ = sig.shape[0];
      } else if (sig.shape[0] != f.batch_size_) {
        return Status(Code::kShapeMismatch, "inputs '" + first + "' and '" + sig.name + "' disagree on the batch size");
      }
    }
    f.slots_.push_back(std::move(slot));
  }
  f.num_samples_ = samples < 0 ? 1 : samples;
  if (samples >= 0 && samples < f.batch_size_) {
    return Status(Code::kShapeMismatch, "the data holds " + std::to_string(samples) + " samples, fewer than one batch of " +
                                            std::to_string(f.batch_size_));
  }
  return f;
}

void BatchFeeder::order_for_epoch(int64_t epoch) {
  if (epoch == epoch_) return;
  epoch_ = epoch;
  order_.resize(static_cast<size_t>(num_samples_));
  std::iota(order_.begin(), order_.end(), 0);
  if (!shuffle_) return;
  uint64_t state = seed_ ^ (0x632be59bd9b4e019ull * static_cast<uint64_t>(epoch + 1));
  for (int64_t i = num_samples_ - 1; i > 0; --i) {
    const int64_t j = static_cast<int64_t>(splitmix64_next(state) % static_cast<uint64_t>(i + 1));
    std::swap(order_[i], order_[j]);
  }
}

Status BatchFeeder::feed(Engine& engine, int64_t step) {
  if (step < 0) return Status(Code::kInvalidArgument, "step " + std::to_string(step) + " is negative");
  const int64_t per_epoch = batches_per_epoch();
  order_for_epoch(step / per_epoch);
  const int64_t first = (step % per_epoch) * batch_size_;
  for (Slot& s : slots_) {
    if (s.sample_bytes == 0 && s.sig.shape.empty()) {
      POCK_RETURN_IF_ERROR(engine.set_input(s.sig.name, s.data.data(), s.data.size()));
      continue;
    }
    for (int64_t j = 0; j < batch_size_; ++j) {
      const int64_t sample = order_[static_cast<size_t>(first + j)];
      std::memcpy(s.staging.data() + j * s.sample_bytes, s.data.data() + sample * s.sample_bytes, s.sample_bytes);
    }
    POCK_RETURN_IF_ERROR(engine.set_input(s.sig.name, s.staging.data(), s.staging.size()));
  }
  return Status::ok();
}

}  // namespace pock::tools
