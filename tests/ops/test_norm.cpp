// Norm family: BatchNorm, BatchNormTrain (with the in-place running-stat update), LayerNorm,
// RMSNorm, Softmax, LogSoftmax. Shape inference with errors naming the node, and the reference
// kernels against naive double loops on random shapes.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>

#include "ir/op_schema.hpp"
#include "support/expect_close.hpp"
#include "support/backend_under_test.hpp"

using namespace pock;
using namespace pock::test;

namespace {

Result<std::vector<Shape>> infer(const std::string& op, const std::vector<Shape>& shapes, const Attrs& attrs = {},
                                 const std::vector<bool>& omitted = {}) {
  Graph g;
  std::vector<TensorId> ids;
  for (size_t i = 0; i < shapes.size(); ++i) {
    const bool skip = i < omitted.size() && omitted[i];
    ids.push_back(skip ? kNoTensor : g.add_input("in" + std::to_string(i), DType::kF32, shapes[i]));
  }
  auto outs = g.add_node(op, ids, attrs, "node");
  if (!outs.is_ok()) return outs.status();
  std::vector<Shape> result;
  for (TensorId id : *outs) result.push_back(g.tensor(id).shape);
  return result;
}

std::vector<double> to_double(const std::vector<float>& v) { return std::vector<double>(v.begin(), v.end()); }

// x [N, C, inner...] seen as (n, c, i) -> flat index.
struct NCI {
  int64_t n, c, inner;
  int64_t at(int64_t ni, int64_t ci, int64_t ii) const { return (ni * c + ci) * inner + ii; }
};

NCI nci_of(const Shape& s) {
  int64_t inner = 1;
  for (size_t d = 2; d < s.size(); ++d) inner *= s[d];
  return {s[0], s[1], inner};
}

Shape random_nc_shape(std::mt19937& gen, int trial) {
  Shape s = random_shape(gen, 2 + trial % 3, 1, 4);
  s[0] += 1;  // at least two values per channel, so training statistics exist
  return s;
}

// Runs one op like run_op_under_test, then also reads back the (possibly mutated) inputs.
Result<std::pair<std::vector<HostTensor>, std::vector<HostTensor>>> run_reading_inputs(
    const std::string& op, const std::vector<HostTensor>& inputs, const Attrs& attrs) {
  Graph g;
  std::vector<TensorId> ids;
  for (size_t i = 0; i < inputs.size(); ++i) ids.push_back(g.add_input("in" + std::to_string(i), inputs[i].dtype, inputs[i].shape));
  auto outs = g.add_node(op, ids, attrs, "node");
  if (!outs.is_ok()) return outs.status();
  for (size_t i = 0; i < outs->size(); ++i) POCK_RETURN_IF_ERROR(g.mark_output((*outs)[i], "out" + std::to_string(i)));
  auto blob = compile(g, nullptr);
  if (!blob.is_ok()) return blob.status();
  Engine::Options options;
  options.backend = backend_under_test();
  auto engine = Engine::open_buffer(blob->data(), blob->size(), options);
  if (!engine.is_ok()) return engine.status();
  for (size_t i = 0; i < inputs.size(); ++i) {
    POCK_RETURN_IF_ERROR(engine->set_input("in" + std::to_string(i), inputs[i].bytes.data(), inputs[i].bytes.size()));
  }
  POCK_RETURN_IF_ERROR(engine->infer());
  auto read = [&](const std::string& name, TensorId id) -> Result<HostTensor> {
    HostTensor t;
    t.dtype = g.tensor(id).dtype;
    t.shape = g.tensor(id).shape;
    t.bytes.resize(g.tensor(id).nbytes());
    POCK_RETURN_IF_ERROR(engine->get_output(name, t.bytes.data(), t.bytes.size()));
    return t;
  };
  std::pair<std::vector<HostTensor>, std::vector<HostTensor>> result;
  for (size_t i = 0; i < outs->size(); ++i) {
    POCK_ASSIGN_OR_RETURN(HostTensor t, read("out" + std::to_string(i), (*outs)[i]));
    result.first.push_back(std::move(t));
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    POCK_ASSIGN_OR_RETURN(HostTensor t, read("in" + std::to_string(i), ids[i]));
    result.second.push_back(std::move(t));
  }
  return result;
}

}  // namespace

// ---- BatchNorm ---------------------------------------------------------------------------------

TEST_CASE("BatchNorm shape inference", "[ops][norm]") {
  CHECK(infer("BatchNorm", {{2, 3, 4, 5}, {3}, {3}, {3}, {3}}).value() == std::vector<Shape>{{2, 3, 4, 5}});
  CHECK(infer("BatchNorm", {{2, 3}, {3}, {3}, {3}, {3}}).value() == std::vector<Shape>{{2, 3}});
  auto gamma = infer("BatchNorm", {{2, 3, 4}, {4}, {3}, {3}, {3}});
  REQUIRE_FALSE(gamma.is_ok());
  CHECK(gamma.status().code() == Code::kShapeMismatch);
  CHECK_THAT(gamma.status().message(), Catch::Contains("BatchNorm 'node'") && Catch::Contains("gamma"));
  auto var = infer("BatchNorm", {{2, 3, 4}, {3}, {3}, {3}, {3, 1}});
  REQUIRE_FALSE(var.is_ok());
  CHECK_THAT(var.status().message(), Catch::Contains("running_var"));
  auto rank = infer("BatchNorm", {{3}, {3}, {3}, {3}, {3}});
  REQUIRE_FALSE(rank.is_ok());
  CHECK_THAT(rank.status().message(), Catch::Contains("BatchNorm 'node'") && Catch::Contains("[N, C, ...]"));
}

TEST_CASE("BatchNorm inference form matches the formula", "[ops][norm]") {
  std::mt19937 gen(3);
  for (int trial = 0; trial < 6; ++trial) {
    const Shape s = random_nc_shape(gen, trial);
    const NCI v = nci_of(s);
    const auto x = random_floats(static_cast<size_t>(numel(s)), 10 + trial, -3.0f, 3.0f);
    const auto gamma = random_floats(static_cast<size_t>(v.c), 20 + trial, 0.5f, 2.0f);
    const auto beta = random_floats(static_cast<size_t>(v.c), 30 + trial);
    const auto mean = random_floats(static_cast<size_t>(v.c), 40 + trial);
    const auto var = random_floats(static_cast<size_t>(v.c), 50 + trial, 0.1f, 2.0f);
    const double eps = trial % 2 ? 1e-5 : 1e-3;
    auto out = run_op_under_test("BatchNorm",
                      {HostTensor::f32(s, x), HostTensor::f32({v.c}, gamma), HostTensor::f32({v.c}, beta),
                       HostTensor::f32({v.c}, mean), HostTensor::f32({v.c}, var)},
                      {{"eps", eps}});
    INFO(shape_str(s));
    REQUIRE(out.is_ok());
    std::vector<double> want(x.size());
    for (int64_t n = 0; n < v.n; ++n)
      for (int64_t c = 0; c < v.c; ++c)
        for (int64_t i = 0; i < v.inner; ++i) {
          const int64_t k = v.at(n, c, i);
          want[k] = (x[k] - mean[c]) / std::sqrt(var[c] + eps) * gamma[c] + beta[c];
        }
    CHECK(mismatches(out.value()[0].f32(), want) == "");
  }
}

TEST_CASE("BatchNormTrain shape inference and mutated inputs", "[ops][norm]") {
  auto shapes = infer("BatchNormTrain", {{2, 3, 4}, {3}, {3}, {3}, {3}});
  REQUIRE(shapes.is_ok());
  CHECK(shapes.value() == std::vector<Shape>{{2, 3, 4}, {3}, {3}});
  const OpSchema* schema = SchemaRegistry::global().find("BatchNormTrain");
  REQUIRE(schema != nullptr);
  CHECK(schema->mutated_inputs == std::vector<int>{3, 4});

  auto single = infer("BatchNormTrain", {{1, 3, 1, 1}, {3}, {3}, {3}, {3}});
  REQUIRE_FALSE(single.is_ok());
  CHECK_THAT(single.status().message(), Catch::Contains("BatchNormTrain 'node'") && Catch::Contains("more than one value"));
  auto momentum = infer("BatchNormTrain", {{2, 3}, {3}, {3}, {3}, {3}}, {{"momentum", 1.5}});
  REQUIRE_FALSE(momentum.is_ok());
  CHECK_THAT(momentum.status().message(), Catch::Contains("momentum"));
}

TEST_CASE("BatchNormTrain normalizes by batch statistics and updates running stats", "[ops][norm]") {
  std::mt19937 gen(4);
  for (int trial = 0; trial < 6; ++trial) {
    const Shape s = random_nc_shape(gen, trial);
    const NCI v = nci_of(s);
    const auto x = random_floats(static_cast<size_t>(numel(s)), 60 + trial, -3.0f, 5.0f);
    const auto gamma = random_floats(static_cast<size_t>(v.c), 70 + trial, 0.5f, 2.0f);
    const auto beta = random_floats(static_cast<size_t>(v.c), 80 + trial);
    const auto rmean = random_floats(static_cast<size_t>(v.c), 90 + trial);
    const auto rvar = random_floats(static_cast<size_t>(v.c), 95 + trial, 0.5f, 2.0f);
    const double eps = 1e-5, momentum = trial % 2 ? 0.1 : 0.3;
    auto out = run_reading_inputs("BatchNormTrain",
                                  {HostTensor::f32(s, x), HostTensor::f32({v.c}, gamma), HostTensor::f32({v.c}, beta),
                                   HostTensor::f32({v.c}, rmean), HostTensor::f32({v.c}, rvar)},
                                  {{"eps", eps}, {"momentum", momentum}});
    INFO(shape_str(s) << " momentum " << momentum);
    REQUIRE(out.is_ok());
    const auto& [outputs, inputs] = out.value();
    std::vector<double> y(x.size()), mean(v.c), invstd(v.c), new_rmean(v.c), new_rvar(v.c);
    const double count = static_cast<double>(v.n * v.inner);
    for (int64_t c = 0; c < v.c; ++c) {
      double sum = 0.0, sq = 0.0;
      for (int64_t n = 0; n < v.n; ++n)
        for (int64_t i = 0; i < v.inner; ++i) sum += x[v.at(n, c, i)];
      mean[c] = sum / count;
      for (int64_t n = 0; n < v.n; ++n)
        for (int64_t i = 0; i < v.inner; ++i) sq += std::pow(x[v.at(n, c, i)] - mean[c], 2);
      invstd[c] = 1.0 / std::sqrt(sq / count + eps);
      for (int64_t n = 0; n < v.n; ++n)
        for (int64_t i = 0; i < v.inner; ++i) y[v.at(n, c, i)] = (x[v.at(n, c, i)] - mean[c]) * invstd[c] * gamma[c] + beta[c];
      new_rmean[c] = (1 - momentum) * rmean[c] + momentum * mean[c];
      new_rvar[c] = (1 - momentum) * rvar[c] + momentum * sq / (count - 1);  // unbiased
    }
    CHECK(mismatches(outputs[0].f32(), y) == "");
    CHECK(mismatches(outputs[1].f32(), mean) == "");
    CHECK(mismatches(outputs[2].f32(), invstd) == "");
    CHECK(mismatches(inputs[3].f32(), new_rmean) == "");
    CHECK(mismatches(inputs[4].f32(), new_rvar) == "");
  }
}

TEST_CASE("BatchNormTrain hand-computed: one channel of [1, 3]", "[ops][norm]") {
  // values 1, 3 (N=2, C=1): mean 2, biased var 1, unbiased var 2.
  auto out = run_reading_inputs("BatchNormTrain",
                                {HostTensor::f32({2, 1}, {1, 3}), HostTensor::f32({1}, {1}), HostTensor::f32({1}, {0}),
                                 HostTensor::f32({1}, {0}), HostTensor::f32({1}, {1})},
                                {{"eps", 0.0}, {"momentum", 0.5}});
  REQUIRE(out.is_ok());
  CHECK(out.value().first[0].f32() == std::vector<float>{-1, 1});
  CHECK(out.value().first[1].f32() == std::vector<float>{2});
  CHECK(out.value().first[2].f32() == std::vector<float>{1});
  CHECK(out.value().second[3].f32() == std::vector<float>{1.0f});  // 0.5 * 0 + 0.5 * 2
  CHECK(out.value().second[4].f32() == std::vector<float>{1.5f});  // 0.5 * 1 + 0.5 * 2
}

// ---- LayerNorm, RMSNorm ------------------------------------------------------------------------

TEST_CASE("LayerNorm and RMSNorm shape inference", "[ops][norm]") {
  CHECK(infer("LayerNorm", {{2, 3, 4}, {4}, {4}}).value() == std::vector<Shape>{{2, 3, 4}, {2, 3}, {2, 3}});
  CHECK(infer("LayerNorm", {{2, 3, 4}, {3, 4}, {3, 4}}, {{"axis", int64_t{1}}}).value() ==
        std::vector<Shape>{{2, 3, 4}, {2}, {2}});
  CHECK(infer("LayerNorm", {{2, 3, 4}}).value() == std::vector<Shape>{{2, 3, 4}, {2, 3}, {2, 3}});
  CHECK(infer("LayerNorm", {{2, 4}, {4}, {4}}, {}, {false, true, false}).value().size() == 3);
  CHECK(infer("RMSNorm", {{2, 3, 4}, {4}}).value() == std::vector<Shape>{{2, 3, 4}, {2, 3}});
  CHECK(infer("RMSNorm", {{5, 4}}, {{"axis", int64_t{0}}}).value() == std::vector<Shape>{{5, 4}, {}});

  auto gamma = infer("LayerNorm", {{2, 3, 4}, {3}});
  REQUIRE_FALSE(gamma.is_ok());
  CHECK_THAT(gamma.status().message(), Catch::Contains("LayerNorm 'node'") && Catch::Contains("gamma must be [4]"));
  auto beta = infer("LayerNorm", {{2, 3, 4}, {4}, {2}});
  REQUIRE_FALSE(beta.is_ok());
  CHECK_THAT(beta.status().message(), Catch::Contains("beta"));
  auto axis = infer("RMSNorm", {{2, 3}}, {{"axis", int64_t{2}}});
  REQUIRE_FALSE(axis.is_ok());
  CHECK_THAT(axis.status().message(), Catch::Contains("RMSNorm 'node'") && Catch::Contains("axis"));
  auto rms_gamma = infer("RMSNorm", {{2, 3}, {2}});
  REQUIRE_FALSE(rms_gamma.is_ok());
  CHECK_THAT(rms_gamma.status().message(), Catch::Contains("RMSNorm 'node'") && Catch::Contains("gamma"));
}

TEST_CASE("LayerNorm matches naive loops, with and without affine inputs", "[ops][norm]") {
  std::mt19937 gen(8);
  for (int trial = 0; trial < 8; ++trial) {
    const int rank = 1 + trial % 3;
    const Shape s = random_shape(gen, rank, 1, 6);
    const int64_t axis = std::uniform_int_distribution<int64_t>(0, rank - 1)(gen);
    int64_t rows = 1, cols = 1;
    for (int d = 0; d < rank; ++d) (d < axis ? rows : cols) *= s[d];
    const Shape normalized(s.begin() + axis, s.end());
    const bool with_gamma = trial % 2 == 0, with_beta = trial % 4 < 2;
    // An offset of 100 checks that the variance does not cancel catastrophically.
    const auto x = random_floats(static_cast<size_t>(numel(s)), 110 + trial, 97.0f, 103.0f);
    const auto gamma = random_floats(static_cast<size_t>(cols), 120 + trial, 0.5f, 2.0f);
    const auto beta = random_floats(static_cast<size_t>(cols), 130 + trial);
    const double eps = 1e-5;
    auto out = run_op_under_test("LayerNorm",
                      {HostTensor::f32(s, x), HostTensor::f32(normalized, gamma), HostTensor::f32(normalized, beta)},
                      {{"axis", axis - (trial % 3 == 0 ? rank : 0)}, {"eps", eps}}, {false, !with_gamma, !with_beta});
    INFO(shape_str(s) << " axis " << axis << " gamma " << with_gamma << " beta " << with_beta);
    REQUIRE(out.is_ok());
    std::vector<double> y(x.size()), mean(rows), invstd(rows);
    for (int64_t r = 0; r < rows; ++r) {
      double sum = 0.0, sq = 0.0;
      for (int64_t j = 0; j < cols; ++j) sum += x[r * cols + j];
      mean[r] = sum / cols;
      for (int64_t j = 0; j < cols; ++j) sq += std::pow(x[r * cols + j] - mean[r], 2);
      invstd[r] = 1.0 / std::sqrt(sq / cols + eps);
      for (int64_t j = 0; j < cols; ++j) {
        y[r * cols + j] = (x[r * cols + j] - mean[r]) * invstd[r] * (with_gamma ? gamma[j] : 1.0) + (with_beta ? beta[j] : 0.0);
      }
    }
    REQUIRE(out.value().size() == 3);
    CHECK(out.value()[1].shape == Shape(s.begin(), s.begin() + axis));
    CHECK(mismatches(out.value()[0].f32(), y, 1e-4, 1e-4) == "");
    CHECK(mismatches(out.value()[1].f32(), mean) == "");
    CHECK(mismatches(out.value()[2].f32(), invstd, 1e-4) == "");
  }
}

TEST_CASE("LayerNorm hand-computed row", "[ops][norm]") {
  // [1, 2, 3, 4]: mean 2.5, var 1.25; eps 0 -> (x - 2.5) / sqrt(1.25)
  auto out = run_op_under_test("LayerNorm", {HostTensor::f32({1, 4}, {1, 2, 3, 4})}, {{"eps", 0.0}});
  REQUIRE(out.is_ok());
  const double s = std::sqrt(1.25);
  CHECK(mismatches(out.value()[0].f32(), {-1.5 / s, -0.5 / s, 0.5 / s, 1.5 / s}) == "");
  CHECK(out.value()[1].f32() == std::vector<float>{2.5f});
}

TEST_CASE("RMSNorm matches naive loops", "[ops][norm]") {
  std::mt19937 gen(9);
  for (int trial = 0; trial < 6; ++trial) {
    const int rank = 1 + trial % 3;
    const Shape s = random_shape(gen, rank, 1, 6);
    const int64_t axis = std::uniform_int_distribution<int64_t>(0, rank - 1)(gen);
    int64_t rows = 1, cols = 1;
    for (int d = 0; d < rank; ++d) (d < axis ? rows : cols) *= s[d];
    const Shape normalized(s.begin() + axis, s.end());
    const bool with_gamma = trial % 2 == 0;
    const auto x = random_floats(static_cast<size_t>(numel(s)), 140 + trial, -3.0f, 3.0f);
    const auto gamma = random_floats(static_cast<size_t>(cols), 150 + trial, 0.5f, 2.0f);
    const double eps = 1e-6;
    auto out = run_op_under_test("RMSNorm", {HostTensor::f32(s, x), HostTensor::f32(normalized, gamma)}, {{"axis", axis}},
                      {false, !with_gamma});
    INFO(shape_str(s) << " axis " << axis << " gamma " << with_gamma);
    REQUIRE(out.is_ok());
    std::vector<double> y(x.size()), invrms(rows);
    for (int64_t r = 0; r < rows; ++r) {
      double sq = 0.0;
      for (int64_t j = 0; j < cols; ++j) sq += std::pow(x[r * cols + j], 2);
      invrms[r] = 1.0 / std::sqrt(sq / cols + eps);
      for (int64_t j = 0; j < cols; ++j) y[r * cols + j] = x[r * cols + j] * invrms[r] * (with_gamma ? gamma[j] : 1.0);
    }
    REQUIRE(out.value().size() == 2);
    CHECK(mismatches(out.value()[0].f32(), y) == "");
    CHECK(mismatches(out.value()[1].f32(), invrms) == "");
  }
}

// ---- Softmax, LogSoftmax -----------------------------------------------------------------------

TEST_CASE("Softmax shape inference", "[ops][norm]") {
  CHECK(infer("Softmax", {{2, 3}}).value() == std::vector<Shape>{{2, 3}});
  CHECK(infer("LogSoftmax", {{2, 3}}, {{"axis", int64_t{0}}}).value() == std::vector<Shape>{{2, 3}});
  auto axis = infer("Softmax", {{2, 3}}, {{"axis", int64_t{-3}}});
  REQUIRE_FALSE(axis.is_ok());
  CHECK_THAT(axis.status().message(), Catch::Contains("Softmax 'node'") && Catch::Contains("axis -3"));
  auto scalar = infer("LogSoftmax", {{}});
  REQUIRE_FALSE(scalar.is_ok());
  CHECK_THAT(scalar.status().message(), Catch::Contains("LogSoftmax 'node'"));
}

TEST_CASE("Softmax and LogSoftmax along any axis, stable for large inputs", "[ops][norm]") {
  std::mt19937 gen(10);
  for (int trial = 0; trial < 10; ++trial) {
    const int rank = 1 + trial % 4;
    const Shape s = random_shape(gen, rank, 1, 5);
    const int64_t axis = std::uniform_int_distribution<int64_t>(0, rank - 1)(gen);
    // Values near 1000 overflow exp() in float unless the max is subtracted first.
    const float base = trial % 2 ? 1000.0f : 0.0f;
    const auto x = random_floats(static_cast<size_t>(numel(s)), 160 + trial, base - 5.0f, base + 5.0f);
    std::vector<double> soft(x.size()), logsoft(x.size());
    for (int64_t i = 0; i < numel(s); ++i) {
      // Naive: over the elements that share every index but `axis`, in double.
      const auto idx = unravel(i, s);
      std::vector<double> row;
      for (int64_t k = 0; k < s[axis]; ++k) {
        auto j = idx;
        j[axis] = k;
        int64_t flat = 0;
        for (size_t d = 0; d < s.size(); ++d) flat = flat * s[d] + j[d];
        row.push_back(x[flat]);
      }
      double max = row[0];
      for (double r : row) max = std::max(max, r);
      double sum = 0.0;
      for (double r : row) sum += std::exp(r - max);
      soft[i] = std::exp(x[i] - max) / sum;
      logsoft[i] = x[i] - max - std::log(sum);
    }
    const Attrs attrs{{"axis", axis - (trial % 3 == 0 ? rank : 0)}};
    auto sm = run_op_under_test("Softmax", {HostTensor::f32(s, x)}, attrs);
    auto lsm = run_op_under_test("LogSoftmax", {HostTensor::f32(s, x)}, attrs);
    INFO(shape_str(s) << " axis " << axis << " base " << base);
    REQUIRE(sm.is_ok());
    REQUIRE(lsm.is_ok());
    CHECK(mismatches(sm.value()[0].f32(), soft) == "");
    CHECK(mismatches(lsm.value()[0].f32(), logsoft, 1e-5, 1e-5) == "");
  }
}

TEST_CASE("Softmax hand-computed", "[ops][norm]") {
  // softmax([0, ln 3]) = [1/4, 3/4]
  auto out = run_op_under_test("Softmax", {HostTensor::f32({2}, {0.0f, static_cast<float>(std::log(3.0))})});
  REQUIRE(out.is_ok());
  CHECK(mismatches(out.value()[0].f32(), {0.25, 0.75}) == "");
  auto log = run_op_under_test("LogSoftmax", {HostTensor::f32({1, 2}, {1000.0f, 1000.0f})});
  REQUIRE(log.is_ok());
  CHECK(mismatches(log.value()[0].f32(), {-std::log(2.0), -std::log(2.0)}) == "");
}
