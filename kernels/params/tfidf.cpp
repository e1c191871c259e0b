#include "kernels/params/tfidf.hpp"

#include <algorithm>

#include "kernels/params/attr_reader.hpp"

namespace pock::params {

bool tfidf_mode_from_name(std::string_view name, TfIdfMode* out) {
  if (name == "TF") *out = TfIdfMode::kTf;
  else if (name == "IDF") *out = TfIdfMode::kIdf;
  else if (name == "TFIDF") *out = TfIdfMode::kTfIdf;
  else return false;
  return true;
}

int64_t check_ngram_pool(const NgramPoolLayout& l, std::string* why) {
  if (l.min_gram < 1 || l.max_gram < l.min_gram) {
    *why = "min_gram_length " + std::to_string(l.min_gram) + " and max_gram_length " + std::to_string(l.max_gram) +
           " must satisfy 1 <= min <= max";
    return -1;
  }
  if (l.max_skip < 0) {
    *why = "max_skip_count must be >= 0, got " + std::to_string(l.max_skip);
    return -1;
  }
  if (l.num_counts < 1) {
    *why = "ngram_counts must give the pool's start of the 1-grams, 2-grams, ...; it is empty";
    return -1;
  }
  // Segment n (n-grams of n tokens) runs from counts[n-1] to the next start (or the pool's end).
  int64_t ngrams = 0;
  for (int64_t k = 0; k < l.num_counts; ++k) {
    const int64_t begin = l.counts[k], end = k + 1 < l.num_counts ? l.counts[k + 1] : l.pool_size;
    if (begin < 0 || end < begin || end > l.pool_size || (end - begin) % (k + 1) != 0) {
      *why = "ngram_counts " + std::to_string(k) + " (" + std::to_string(begin) + " to " + std::to_string(end) +
             ") does not hold whole " + std::to_string(k + 1) + "-grams of the " + std::to_string(l.pool_size) +
             "-token pool";
      return -1;
    }
    ngrams += (end - begin) / (k + 1);
  }
  if (l.num_indexes != ngrams) {
    *why = "ngram_indexes has " + std::to_string(l.num_indexes) + " values; the pool holds " +
           std::to_string(ngrams) + " n-grams";
    return -1;
  }
  if (l.num_weights != 0 && l.num_weights != ngrams) {
    *why = "weights has " + std::to_string(l.num_weights) + " values; the pool holds " + std::to_string(ngrams) +
           " n-grams";
    return -1;
  }
  int64_t width = 0;
  for (int64_t i = 0; i < l.num_indexes; ++i) {
    if (l.indexes[i] < 0) {
      *why = "ngram_indexes holds the negative coordinate " + std::to_string(l.indexes[i]);
      return -1;
    }
    width = std::max(width, l.indexes[i] + 1);
  }
  return width;
}

namespace {

struct Lists {
  const pock_attr* pool = nullptr;
  const pock_attr* counts = nullptr;
  const pock_attr* indexes = nullptr;
  const pock_attr* weights = nullptr;
};

Lists find_lists(const pock_op_desc& op) {
  Lists l;
  for (int32_t i = 0; i < op.num_attrs; ++i) {
    const pock_attr& a = op.attrs[i];
    const std::string_view name = a.name ? a.name : "";
    if (name == "pool_int64s") l.pool = &a;
    else if (name == "ngram_counts") l.counts = &a;
    else if (name == "ngram_indexes") l.indexes = &a;
    else if (name == "weights") l.weights = &a;
  }
  return l;
}

}  // namespace

Status parse(const pock_op_desc& op, TfIdfParams* out) {
  AttrReader r(op);
  out->min_gram = r.integer("min_gram_length", 1);
  out->max_gram = r.integer("max_gram_length", 1);
  out->max_skip = r.integer("max_skip_count", 0);
  const std::string_view mode = r.text("mode", "TF");
  if (!tfidf_mode_from_name(mode, &out->mode)) r.invalid("mode", "must be TF, IDF or TFIDF, got '" + std::string(mode) + "'");
  POCK_RETURN_IF_ERROR(r.status());

  const Lists lists = find_lists(op);
  for (const auto& [attr, name] : {std::pair{lists.pool, "pool_int64s"}, {lists.counts, "ngram_counts"},
                                   {lists.indexes, "ngram_indexes"}}) {
    if (!attr || attr->kind != POCK_ATTR_INTS) r.invalid(name, "must be a list of integers");
  }
  if (lists.weights && lists.weights->kind != POCK_ATTR_FLOATS) r.invalid("weights", "must be a list of floats");
  POCK_RETURN_IF_ERROR(r.status());

  NgramPoolLayout layout;
  layout.pool = lists.pool->ints;
  layout.pool_size = lists.pool->count;
  layout.counts = lists.counts->ints;
  layout.num_counts = lists.counts->count;
  layout.indexes = lists.indexes->ints;
  layout.num_indexes = lists.indexes->count;
  layout.num_weights = lists.weights ? lists.weights->count : 0;
  layout.min_gram = out->min_gram;
  layout.max_gram = out->max_gram;
  layout.max_skip = out->max_skip;
  std::string why;
  out->width = check_ngram_pool(layout, &why);
  if (out->width < 0) {
    r.invalid("pool_int64s", why);
    return r.status();
  }

  int64_t position = 0;
  for (int64_t k = 0; k < layout.num_counts; ++k) {
    const int64_t n = k + 1, begin = layout.counts[k];
    const int64_t end = k + 1 < layout.num_counts ? layout.counts[k + 1] : layout.pool_size;
    for (int64_t at = begin; at < end; at += n, ++position) {
      out->position.emplace(std::vector<int64_t>(layout.pool + at, layout.pool + at + n), position);
    }
  }
  out->coordinate.assign(layout.indexes, layout.indexes + layout.num_indexes);
  out->weight.assign(static_cast<size_t>(layout.num_indexes), 1.0f);
  for (int64_t i = 0; i < layout.num_weights; ++i) out->weight[static_cast<size_t>(i)] = static_cast<float>(lists.weights->floats[i]);
  return Status::ok();
}

}  // namespace pock::params
