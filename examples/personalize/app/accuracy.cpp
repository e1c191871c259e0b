#include "accuracy.hpp"

#include <algorithm>

namespace personalize {

pock::Result<double> accuracy(pock::Engine& engine, BatchFeed& feed, SampleFiles& files, const std::string& logits) {
  const int64_t n = files.size(), batch = feed.batch_size();
  if (n == 0) return pock::Status(pock::Code::kInvalidArgument, "no samples to evaluate");
  POCK_ASSIGN_OR_RETURN(pock_tensor_info info, engine.info(logits));
  const int64_t classes = info.dims[info.rank - 1];
  std::vector<float> out(info.nbytes / sizeof(float));
  std::vector<int64_t> indices(static_cast<size_t>(batch));
  int64_t correct = 0;
  for (int64_t start = 0; start < n; start += batch) {
    for (int64_t i = 0; i < batch; ++i) indices[static_cast<size_t>(i)] = start + i < n ? start + i : i;
    POCK_RETURN_IF_ERROR(feed.feed(engine, files, indices, false));
    POCK_RETURN_IF_ERROR(engine.infer());
    POCK_RETURN_IF_ERROR(engine.get_output(logits, out.data(), info.nbytes));
    for (int64_t i = 0; i < batch && start + i < n; ++i) {
      const float* row = out.data() + i * classes;
      const int64_t predicted = std::max_element(row, row + classes) - row;
      correct += predicted == feed.labels()[static_cast<size_t>(i)];
    }
  }
  return static_cast<double>(correct) / static_cast<double>(n);
}

}  // namespace personalize
