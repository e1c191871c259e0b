// MatMul and Linear: shape inference (with errors naming the node) and the reference kernels
// against naive double-precision loops, on random non-square shapes, transposes and broadcast
// batch dims.
#include <catch2/catch.hpp>

#include "support/expect_close.hpp"
#include "support/backend_under_test.hpp"

using namespace pock;
using namespace pock::test;

namespace {

// Output types of one node over fresh inputs of the given shapes, as Graph::add_node infers them.
Result<std::vector<Shape>> infer(const std::string& op, const std::vector<Shape>& shapes, const Attrs& attrs = {}) {
  Graph g;
  std::vector<TensorId> ids;
  for (size_t i = 0; i < shapes.size(); ++i) ids.push_back(g.add_input("in" + std::to_string(i), DType::kF32, shapes[i]));
  auto outs = g.add_node(op, ids, attrs, "node");
  if (!outs.is_ok()) return outs.status();
  std::vector<Shape> result;
  for (TensorId id : *outs) result.push_back(g.tensor(id).shape);
  return result;
}

Attrs transposes(bool ta, bool tb) { return {{"transpose_a", int64_t{ta}}, {"transpose_b", int64_t{tb}}}; }

// Naive batched matmul in double. a is [..., M, K] (or [..., K, M] when ta), b likewise.
std::vector<double> naive_matmul(const std::vector<float>& a, const Shape& sa, const std::vector<float>& b,
                                 const Shape& sb, bool ta, bool tb, Shape* out_shape) {
  const size_t ra = sa.size(), rb = sb.size();
  const int64_t m = ta ? sa[ra - 1] : sa[ra - 2], k = ta ? sa[ra - 2] : sa[ra - 1];
  const int64_t n = tb ? sb[rb - 2] : sb[rb - 1];
  const Shape batch_a(sa.begin(), sa.end() - 2), batch_b(sb.begin(), sb.end() - 2);
  Shape batch(std::max(batch_a.size(), batch_b.size()), 1);
  for (size_t i = 0; i < batch.size(); ++i) {
    const size_t ia = i + batch_a.size(), ib = i + batch_b.size();
    const int64_t da = ia >= batch.size() ? batch_a[ia - batch.size()] : 1;
    const int64_t db = ib >= batch.size() ? batch_b[ib - batch.size()] : 1;
    batch[i] = da == 1 ? db : da;
  }
  *out_shape = batch;
  out_shape->push_back(m);
  out_shape->push_back(n);
  std::vector<double> y;
  for (int64_t bi = 0; bi < numel(batch); ++bi) {
    const auto idx = unravel(bi, batch);
    const int64_t pa = broadcast_source(idx, batch_a), pb = broadcast_source(idx, batch_b);
    const float* A = a.data() + pa * m * k;
    const float* B = b.data() + pb * k * n;
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double acc = 0.0;
        for (int64_t p = 0; p < k; ++p) {
          const double av = ta ? A[p * m + i] : A[i * k + p];
          const double bv = tb ? B[j * k + p] : B[p * n + j];
          acc += av * bv;
        }
        y.push_back(acc);
      }
    }
  }
  return y;
}

}  // namespace

TEST_CASE("MatMul shape inference", "[ops][linalg]") {
  CHECK(infer("MatMul", {{2, 3}, {3, 4}}).value()[0] == Shape{2, 4});
  CHECK(infer("MatMul", {{3, 2}, {3, 4}}, transposes(true, false)).value()[0] == Shape{2, 4});
  CHECK(infer("MatMul", {{2, 3}, {4, 3}}, transposes(false, true)).value()[0] == Shape{2, 4});
  CHECK(infer("MatMul", {{5, 1, 2, 3}, {4, 3, 6}}).value()[0] == Shape{5, 4, 2, 6});
  CHECK(infer("MatMul", {{7, 2, 3}, {3, 6}}).value()[0] == Shape{7, 2, 6});

  auto inner = infer("MatMul", {{2, 3}, {4, 5}});
  REQUIRE_FALSE(inner.is_ok());
  CHECK(inner.status().code() == Code::kShapeMismatch);
  CHECK_THAT(inner.status().message(), Catch::Contains("MatMul 'node'") && Catch::Contains("K=3") && Catch::Contains("K=4"));

  auto batch = infer("MatMul", {{2, 2, 3}, {3, 3, 4}});
  REQUIRE_FALSE(batch.is_ok());
  CHECK_THAT(batch.status().message(), Catch::Contains("MatMul 'node'") && Catch::Contains("batch"));

  auto vector = infer("MatMul", {{3}, {3, 4}});
  REQUIRE_FALSE(vector.is_ok());
  CHECK_THAT(vector.status().message(), Catch::Contains("MatMul 'node'") && Catch::Contains("rank >= 2"));

  auto flag = infer("MatMul", {{2, 3}, {3, 4}}, {{"transpose_a", int64_t{2}}});
  REQUIRE_FALSE(flag.is_ok());
  CHECK_THAT(flag.status().message(), Catch::Contains("transpose_a"));
}

TEST_CASE("MatMul hand-computed 2x3 @ 3x2", "[ops][linalg]") {
  auto out = run_op_under_test("MatMul", {HostTensor::f32({2, 3}, {1, 2, 3, 4, 5, 6}), HostTensor::f32({3, 2}, {7, 8, 9, 10, 11, 12})});
  REQUIRE(out.is_ok());
  // [1 2 3] . [7 9 11] = 58, [1 2 3] . [8 10 12] = 64, [4 5 6] . [7 9 11] = 139, [4 5 6] . [8 10 12] = 154
  CHECK(out.value()[0].f32() == std::vector<float>{58, 64, 139, 154});
}

TEST_CASE("MatMul matches naive loops on random shapes, transposes and broadcast batches", "[ops][linalg]") {
  std::mt19937 gen(42);
  for (int trial = 0; trial < 24; ++trial) {
    const bool ta = trial & 1, tb = trial & 2;
    const Shape mkn = random_shape(gen, 3, 1, 7);
    const int64_t m = mkn[0], k = mkn[1], n = mkn[2];
    // Batch dims: a random shape, each operand keeps a suffix of it with some dims set to 1.
    const Shape batch = random_shape(gen, trial % 4, 1, 3);
    auto operand_batch = [&]() {
      Shape s(batch.begin() + std::uniform_int_distribution<int64_t>(0, static_cast<int64_t>(batch.size()))(gen), batch.end());
      for (int64_t& d : s) {
        if (gen() % 3 == 0) d = 1;
      }
      return s;
    };
    Shape sa = operand_batch(), sb = operand_batch();
    sa.push_back(ta ? k : m);
    sa.push_back(ta ? m : k);
    sb.push_back(tb ? n : k);
    sb.push_back(tb ? k : n);
    const auto a = random_floats(static_cast<size_t>(numel(sa)), 1000 + trial);
    const auto b = random_floats(static_cast<size_t>(numel(sb)), 2000 + trial);
    Shape want_shape;
    const auto want = naive_matmul(a, sa, b, sb, ta, tb, &want_shape);
    auto out = run_op_under_test("MatMul", {HostTensor::f32(sa, a), HostTensor::f32(sb, b)}, transposes(ta, tb));
    INFO("a " << shape_str(sa) << " b " << shape_str(sb) << " ta " << ta << " tb " << tb);
    REQUIRE(out.is_ok());
    CHECK(out.value()[0].shape == want_shape);
    CHECK(mismatches(out.value()[0].f32(), want) == "");
  }
}

TEST_CASE("Linear shape inference", "[ops][linalg]") {
  CHECK(infer("Linear", {{8, 5}, {3, 5}, {3}}).value()[0] == Shape{8, 3});
  CHECK(infer("Linear", {{2, 4, 5}, {3, 5}}).value()[0] == Shape{2, 4, 3});
  CHECK(infer("Linear", {{5}, {3, 5}}).value()[0] == Shape{3});

  auto k = infer("Linear", {{8, 5}, {3, 4}});
  REQUIRE_FALSE(k.is_ok());
  CHECK(k.status().code() == Code::kShapeMismatch);
  CHECK_THAT(k.status().message(), Catch::Contains("Linear 'node'") && Catch::Contains("K=4"));

  auto bias = infer("Linear", {{8, 5}, {3, 5}, {5}});
  REQUIRE_FALSE(bias.is_ok());
  CHECK_THAT(bias.status().message(), Catch::Contains("Linear 'node'") && Catch::Contains("bias"));

  auto weight = infer("Linear", {{8, 5}, {3, 5, 1}});
  REQUIRE_FALSE(weight.is_ok());
  CHECK_THAT(weight.status().message(), Catch::Contains("Linear 'node'") && Catch::Contains("weight"));
}

TEST_CASE("Linear hand-computed with bias", "[ops][linalg]") {
  // x [1, 2] = [1, 2]; w = [[1, 0], [2, -1], [0.5, 0.5]]; b = [10, 20, 30]
  auto out = run_op_under_test("Linear", {HostTensor::f32({1, 2}, {1, 2}), HostTensor::f32({3, 2}, {1, 0, 2, -1, 0.5f, 0.5f}),
                               HostTensor::f32({3}, {10, 20, 30})});
  REQUIRE(out.is_ok());
  CHECK(out.value()[0].f32() == std::vector<float>{11, 20, 31.5f});
}

TEST_CASE("Linear matches naive loops, with and without bias", "[ops][linalg]") {
  std::mt19937 gen(7);
  for (int trial = 0; trial < 12; ++trial) {
    const bool with_bias = trial % 2 == 0;
    Shape sx = random_shape(gen, 1 + trial % 3, 1, 5);
    const int64_t k = sx.back();
    const int64_t n = std::uniform_int_distribution<int64_t>(1, 6)(gen);
    const auto x = random_floats(static_cast<size_t>(numel(sx)), 300 + trial);
    const auto w = random_floats(static_cast<size_t>(n * k), 400 + trial);
    const auto b = random_floats(static_cast<size_t>(n), 500 + trial);
    std::vector<HostTensor> inputs = {HostTensor::f32(sx, x), HostTensor::f32({n, k}, w)};
    if (with_bias) inputs.push_back(HostTensor::f32({n}, b));
    auto out = run_op_under_test("Linear", inputs);
    INFO("x " << shape_str(sx) << " n " << n << " bias " << with_bias);
    REQUIRE(out.is_ok());
    Shape want_shape = sx;
    want_shape.back() = n;
    CHECK(out.value()[0].shape == want_shape);
    std::vector<double> want;
    for (int64_t r = 0; r < numel(sx) / k; ++r) {
      for (int64_t j = 0; j < n; ++j) {
        double acc = with_bias ? b[j] : 0.0;
        for (int64_t p = 0; p < k; ++p) acc += static_cast<double>(x[r * k + p]) * w[j * k + p];
        want.push_back(acc);
      }
    }
    CHECK(mismatches(out.value()[0].f32(), want) == "");
  }
}

TEST_CASE("Linear with an omitted bias input", "[ops][linalg]") {
  auto out = run_op_under_test("Linear", {HostTensor::f32({2, 2}, {1, 2, 3, 4}), HostTensor::f32({1, 2}, {1, 1}), HostTensor::f32({1}, {99})},
                    {}, {false, false, true});
  REQUIRE(out.is_ok());
  CHECK(out.value()[0].f32() == std::vector<float>{3, 7});
}
