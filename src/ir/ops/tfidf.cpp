// tfidf family schema: ONNX's TfIdfVectorizer over integer tokens (a string pool is refused at
// import). Each row of tokens becomes a row of n-gram counts (or weighted counts) over the pool.
#include <string>

#include "ir/ops/schema_helpers.hpp"
#include "kernels/params/tfidf.hpp"

namespace pock {
namespace {

// tokens [C] or [N, C] (i32/i64) -> f32 [width] or [N, width], width = max(ngram_indexes) + 1.
Status tfidf_vectorizer(InferContext& ctx) {
  const TensorType& x = ctx.in(0);
  if (x.dtype != DType::kI32 && x.dtype != DType::kI64) {
    return ctx.error(std::string("tokens must be i32 or i64, got ") + dtype_name(x.dtype));
  }
  if (x.shape.size() != 1 && x.shape.size() != 2) {
    return ctx.shape_error("tokens must be [C] or [N, C], got " + shape_str(x.shape));
  }
  const std::string mode(ctx.attrs->get_string("mode", "TF"));
  params::TfIdfMode kind;
  if (!params::tfidf_mode_from_name(mode, &kind)) return ctx.error("mode must be TF, IDF or TFIDF, got '" + mode + "'");
  static const std::vector<int64_t> kNone;
  const std::vector<int64_t>& pool = ctx.attrs->get_ints("pool_int64s", kNone);
  const std::vector<int64_t>& counts = ctx.attrs->get_ints("ngram_counts", kNone);
  const std::vector<int64_t>& indexes = ctx.attrs->get_ints("ngram_indexes", kNone);
  params::NgramPoolLayout layout;
  layout.pool = pool.data();
  layout.pool_size = static_cast<int64_t>(pool.size());
  layout.counts = counts.data();
  layout.num_counts = static_cast<int64_t>(counts.size());
  layout.indexes = indexes.data();
  layout.num_indexes = static_cast<int64_t>(indexes.size());
  layout.num_weights = static_cast<int64_t>(ctx.attrs->get_floats("weights", {}).size());
  layout.min_gram = ctx.attrs->get_int("min_gram_length", 1);
  layout.max_gram = ctx.attrs->get_int("max_gram_length", 1);
  layout.max_skip = ctx.attrs->get_int("max_skip_count", 0);
  std::string why;
  const int64_t width = params::check_ngram_pool(layout, &why);
  if (width < 0) return ctx.error(why);
  Shape out = x.shape;
  out.back() = width;
  ctx.outputs = {TensorType{DType::kF32, std::move(out)}};
  return Status::ok();
}

}  // namespace

void register_tfidf_schemas(SchemaRegistry& r) {
  schema::add(r, "TfIdfVectorizer", 1, 1, 1, 1, tfidf_vectorizer,
              "y[n, ngram_indexes[i]] = how often the i-th pool n-gram occurs in row n (n-grams of min..max_gram_length "
              "tokens, taken with up to max_skip_count tokens skipped between neighbours); mode IDF: 1 if it occurs, "
              "times weights[i]; TFIDF: the count times weights[i]");
}

}  // namespace pock
