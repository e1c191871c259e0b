// Held-out accuracy: the inference function (BatchNorm with running statistics, no dropout) over
// every sample of a file, the predicted class being the largest logit.
#pragma once
#include <string>

#include "batch_feed.hpp"

namespace personalize {

// A last partial batch is padded with earlier samples whose predictions are not counted.
pock::Result<double> accuracy(pock::Engine& engine, BatchFeed& feed, SampleFiles& files,
                              const std::string& logits = "logits");

}  // namespace personalize
