// tfidf family: TfIdfVectorizer on hand-counted n-grams (ONNX's operator text: the skip example
// and its modes), and the errors of a malformed pool.
#include <catch2/catch.hpp>

#include "support/infer_types.hpp"
#include "support/op_runner.hpp"

using namespace pock;
using namespace pock::test;

namespace {

// Pool: unigrams 2 3 5 4 (coordinates 0-3), bigrams (5,6) (7,8) (6,7) (coordinates 4-6).
Attrs pool_attrs(int64_t min_gram, int64_t max_gram, int64_t max_skip, const std::string& mode) {
  return Attrs{{"min_gram_length", min_gram},
               {"max_gram_length", max_gram},
               {"max_skip_count", max_skip},
               {"mode", mode},
               {"pool_int64s", std::vector<int64_t>{2, 3, 5, 4, 5, 6, 7, 8, 6, 7}},
               {"ngram_counts", std::vector<int64_t>{0, 4}},
               {"ngram_indexes", std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6}},
               {"weights", std::vector<double>{1, 2, 3, 4, 5, 6, 7}}};
}

}  // namespace

TEST_CASE("TfIdfVectorizer counts consecutive bigrams", "[ops][tfidf]") {
  // Bigrams of the row: (1,1) (1,3) (3,3) (3,3) (3,7) (7,8) (8,6) (6,7) (7,5) (5,6) (6,8): each pool
  // bigram once. Unigrams are below min_gram_length.
  const HostTensor x = HostTensor::i32({12}, {1, 1, 3, 3, 3, 7, 8, 6, 7, 5, 6, 8});
  auto out = run_op("TfIdfVectorizer", {x}, pool_attrs(2, 2, 0, "TF"));
  REQUIRE(out.is_ok());
  CHECK(out.value()[0].shape == Shape{7});
  CHECK(out.value()[0].f32() == std::vector<float>{0, 0, 0, 0, 1, 1, 1});
}

TEST_CASE("TfIdfVectorizer takes n-grams with skips, per row, in each mode", "[ops][tfidf]") {
  // Row 0: 5 6 7 8 6 7 -> unigrams 5:1 6:2 7:2 8:1; bigrams skip 0: (5,6) (6,7) (7,8) (8,6) (6,7),
  // skip 1: (5,7) (6,8) (7,6) (8,7). Row 1: 2 3 2 7 3 5 -> unigrams 2:2 3:2 5:1; bigrams skip 0
  // (2,3) (3,2) (2,7) (7,3) (3,5), skip 1 (2,2) (3,7) (2,3) (7,5): none in the pool.
  const HostTensor x = HostTensor::i64({2, 6}, {5, 6, 7, 8, 6, 7, 2, 3, 2, 7, 3, 5});
  auto tf = run_op("TfIdfVectorizer", {x}, pool_attrs(1, 2, 1, "TF"));
  REQUIRE(tf.is_ok());
  CHECK(tf.value()[0].shape == Shape{2, 7});
  CHECK(tf.value()[0].f32() == std::vector<float>{0, 0, 1, 0, 1, 1, 2,  //
                                                  2, 2, 1, 0, 0, 0, 0});
  auto idf = run_op("TfIdfVectorizer", {x}, pool_attrs(1, 2, 1, "IDF"));
  REQUIRE(idf.is_ok());
  CHECK(idf.value()[0].f32() == std::vector<float>{0, 0, 3, 0, 5, 6, 7,  //
                                                   1, 2, 3, 0, 0, 0, 0});
  auto tfidf = run_op("TfIdfVectorizer", {x}, pool_attrs(1, 2, 1, "TFIDF"));
  REQUIRE(tfidf.is_ok());
  CHECK(tfidf.value()[0].f32() == std::vector<float>{0, 0, 3, 0, 5, 6, 14,  //
                                                     2, 4, 3, 0, 0, 0, 0});
}

TEST_CASE("TfIdfVectorizer's skips: ONNX's example sequence", "[ops][tfidf]") {
  // 94 17 36 12 28 with up to 2 skips: (94,17) (17,36) (36,12) (12,28), (94,36) (17,12) (36,28),
  // (94,12) (17,28). Pool bigrams (94,12) (17,28) (28,94): the last never occurs.
  const Attrs attrs{{"min_gram_length", int64_t{2}},
                    {"max_gram_length", int64_t{2}},
                    {"max_skip_count", int64_t{2}},
                    {"mode", std::string("TF")},
                    {"pool_int64s", std::vector<int64_t>{94, 12, 17, 28, 28, 94}},
                    {"ngram_counts", std::vector<int64_t>{0, 0}},
                    {"ngram_indexes", std::vector<int64_t>{2, 0, 1}}};
  auto out = run_op("TfIdfVectorizer", {HostTensor::i64({5}, {94, 17, 36, 12, 28})}, attrs);
  REQUIRE(out.is_ok());
  CHECK(out.value()[0].f32() == std::vector<float>{1, 0, 1});
  Attrs one_skip = attrs;
  one_skip.set("max_skip_count", int64_t{1});
  auto fewer = run_op("TfIdfVectorizer", {HostTensor::i64({5}, {94, 17, 36, 12, 28})}, one_skip);
  REQUIRE(fewer.is_ok());
  CHECK(fewer.value()[0].f32() == std::vector<float>{0, 0, 0});
}

TEST_CASE("TfIdfVectorizer refuses a malformed pool by name", "[ops][tfidf][errors]") {
  const TensorType tokens{DType::kI64, {2, 6}};
  auto ok = infer("TfIdfVectorizer", {tokens}, pool_attrs(1, 2, 0, "TF"));
  REQUIRE(ok.is_ok());
  CHECK(ok.value()[0].shape == Shape{2, 7});
  CHECK(ok.value()[0].dtype == DType::kF32);

  auto odd = pool_attrs(1, 2, 0, "TF");
  odd.set("pool_int64s", std::vector<int64_t>{2, 3, 5, 4, 5, 6, 7, 8, 6});  // half a bigram
  odd.set("ngram_indexes", std::vector<int64_t>{0, 1, 2, 3, 4, 5});
  auto bad_pool = infer("TfIdfVectorizer", {tokens}, odd);
  REQUIRE_FALSE(bad_pool.is_ok());
  CHECK(bad_pool.status().message().find("whole 2-grams") != std::string::npos);

  auto short_indexes = pool_attrs(1, 2, 0, "TF");
  short_indexes.set("ngram_indexes", std::vector<int64_t>{0, 1, 2});
  auto bad_indexes = infer("TfIdfVectorizer", {tokens}, short_indexes);
  REQUIRE_FALSE(bad_indexes.is_ok());
  CHECK(bad_indexes.status().message().find("ngram_indexes has 3 values") != std::string::npos);

  CHECK_FALSE(infer("TfIdfVectorizer", {tokens}, pool_attrs(1, 2, 0, "BM25")).is_ok());
  CHECK_FALSE(infer("TfIdfVectorizer", {tokens}, pool_attrs(3, 2, 0, "TF")).is_ok());
  CHECK_FALSE(infer("TfIdfVectorizer", {f32({2, 6})}, pool_attrs(1, 2, 0, "TF")).is_ok());
  CHECK_FALSE(infer("TfIdfVectorizer", {TensorType{DType::kI64, {2, 3, 6}}}, pool_attrs(1, 2, 0, "TF")).is_ok());
}
