// Typed parameters of the tfidf family (ONNX TfIdfVectorizer over integer tokens), parsed once at
// prepare by one parser every backend shares. The n-gram pool is indexed here, so that a step
// only looks n-grams up.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "pock/backend.h"
#include "pock/status.hpp"

namespace pock::params {

// What an output coordinate holds (ONNX mode): the n-gram's count, 1 if it occurs at all times its
// weight, or its count times its weight.
enum class TfIdfMode { kTf, kIdf, kTfIdf };
bool tfidf_mode_from_name(std::string_view name, TfIdfMode* out);

// The attributes that describe the pool, as ONNX lays them out: pool holds the 1-grams from
// counts[0], the 2-grams (two tokens each) from counts[1], and so on; indexes[i] is the output
// coordinate of the i-th n-gram in pool order; weights is empty or one per n-gram.
struct NgramPoolLayout {
  const int64_t* pool = nullptr;
  int64_t pool_size = 0;
  const int64_t* counts = nullptr;
  int64_t num_counts = 0;
  const int64_t* indexes = nullptr;
  int64_t num_indexes = 0;
  int64_t num_weights = 0;
  int64_t min_gram = 1, max_gram = 1, max_skip = 0;
};
// Checks the layout; returns the output width (largest index + 1), or an error message in `why`.
int64_t check_ngram_pool(const NgramPoolLayout& layout, std::string* why);

struct TfIdfParams {
  TfIdfMode mode = TfIdfMode::kTf;
  int64_t min_gram = 1, max_gram = 1, max_skip = 0;
  int64_t width = 0;  // output coordinates per row
  // n-gram (its tokens) -> its position in pool order; coordinate[] and weight[] by that position.
  std::map<std::vector<int64_t>, int64_t> position;
  std::vector<int64_t> coordinate;
  std::vector<float> weight;
};

Status parse(const pock_op_desc& op, TfIdfParams* out);

}  // namespace pock::params
