#include "batch_feed.hpp"

namespace personalize {

pock::Result<BatchFeed> BatchFeed::create(pock::Engine& engine, const InputNames& names) {
  POCK_ASSIGN_OR_RETURN(pock_tensor_info x, engine.info(names.x));
  if (x.dtype != POCK_F32 || x.rank < 2) {
    return pock::Status(pock::Code::kShapeMismatch, "input '" + names.x + "' must be f32 [batch, ...]");
  }
  BatchFeed feed;
  feed.names_ = names;
  feed.batch_ = x.dims[0];
  feed.sample_floats_ = 1;
  for (int i = 1; i < x.rank; ++i) feed.sample_floats_ *= x.dims[i];
  feed.x_.resize(static_cast<size_t>(feed.batch_ * feed.sample_floats_));
  feed.labels_.resize(static_cast<size_t>(feed.batch_));
  return feed;
}

pock::Status BatchFeed::feed(pock::Engine& engine, SampleFiles& files, const std::vector<int64_t>& indices,
                             bool with_labels) {
  if (static_cast<int64_t>(indices.size()) != batch_) {
    return pock::Status(pock::Code::kInvalidArgument, "a batch needs exactly " + std::to_string(batch_) + " samples");
  }
  POCK_RETURN_IF_ERROR(files.read(indices, x_.data(), labels_.data()));
  POCK_RETURN_IF_ERROR(engine.set_input(names_.x, x_));
  if (!with_labels) return pock::Status::ok();
  POCK_ASSIGN_OR_RETURN(pock_tensor_info info, engine.info(names_.label));
  if (info.dtype == POCK_I64) return engine.set_input(names_.label, labels_);
  // A compiler may choose i32 class indices; the values are small class numbers either way.
  labels_i32_.assign(labels_.begin(), labels_.end());
  return engine.set_input(names_.label, labels_i32_);
}

}  // namespace personalize
