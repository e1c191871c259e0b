// Sequence family: Gather, Rope, CausalMask, Dropout, DropoutTrain against hand-computed cases
// and formulas written here.
#include <catch2/catch.hpp>

#include <cmath>
#include <complex>
#include <limits>

#include "ir/op_schema.hpp"
#include "support/backend_compare.hpp"
#include "support/infer_types.hpp"
#include "support/op_runner.hpp"

using namespace pock;
using namespace pock::test;
using Ints = std::vector<int64_t>;

TEST_CASE("Gather axis 0 is an embedding lookup", "[ops][sequence]") {
  const std::vector<float> table{0, 1, 2, 10, 11, 12, 20, 21, 22, 30, 31, 32, 40, 41, 42};  // [5, 3]
  auto out = run_op("Gather", {HostTensor::f32({5, 3}, table), HostTensor::i64({2, 2}, {4, 0, -1, 2})});
  REQUIRE(out.is_ok());
  CHECK(out.value()[0].shape == Shape{2, 2, 3});
  CHECK(out.value()[0].f32() == std::vector<float>{40, 41, 42, 0, 1, 2, 40, 41, 42, 20, 21, 22});
}

TEST_CASE("Gather on an inner axis with i32 indices and i64 data", "[ops][sequence]") {
  // data [2, 4, 2]: value = 100 * a + 10 * b + c.
  std::vector<int64_t> data;
  for (int64_t a = 0; a < 2; ++a)
    for (int64_t b = 0; b < 4; ++b)
      for (int64_t c = 0; c < 2; ++c) data.push_back(100 * a + 10 * b + c);
  auto out = run_op("Gather", {HostTensor::i64({2, 4, 2}, data), HostTensor::i32({3}, {3, -4, 1})},
                    {{"axis", int64_t{-2}}});
  REQUIRE(out.is_ok());
  CHECK(out.value()[0].shape == Shape{2, 3, 2});
  CHECK(out.value()[0].values<int64_t>() == std::vector<int64_t>{30, 31, 0, 1, 10, 11, 130, 131, 100, 101, 110, 111});

  // A scalar index drops the axis.
  auto scalar = run_op("Gather", {HostTensor::i64({2, 4, 2}, data), HostTensor::i64({}, {2})}, {{"axis", int64_t{1}}});
  REQUIRE(scalar.is_ok());
  CHECK(scalar.value()[0].shape == Shape{2, 2});
  CHECK(scalar.value()[0].values<int64_t>() == std::vector<int64_t>{20, 21, 120, 121});
}

TEST_CASE("Gather shape inference and errors", "[ops][sequence][errors]") {
  auto shape = infer("Gather", {f32({3, 4, 5}), TensorType{DType::kI64, {2, 6}}}, {{"axis", int64_t{1}}});
  REQUIRE(shape.is_ok());
  CHECK(shape.value()[0] == f32({3, 2, 6, 5}));

  auto float_indices = infer("Gather", {f32({3, 4}), f32({2})}, {});
  REQUIRE_FALSE(float_indices.is_ok());
  CHECK_THAT(float_indices.status().message(), Catch::Contains("the_node") && Catch::Contains("indices"));
  CHECK_FALSE(infer("Gather", {f32({3, 4}), TensorType{DType::kI64, {2}}}, {{"axis", int64_t{2}}}).is_ok());

  // An index out of range is the data's fault: the kernel reports it, naming the node.
  for (int64_t bad : {5, -6}) {
    auto out = run_op("Gather", {HostTensor::f32({5, 3}, std::vector<float>(15)), HostTensor::i64({2}, {1, bad})});
    REQUIRE_FALSE(out.is_ok());
    CHECK_THAT(out.status().message(), Catch::Contains("node") && Catch::Contains("out of range"));
  }
  auto bad32 = run_op("Gather", {HostTensor::f32({5, 3}, std::vector<float>(15)), HostTensor::i32({1}, {7})});
  CHECK_FALSE(bad32.is_ok());
}

namespace {

// Rotate-half form as in Hugging Face LLaMA: y = x * cos + rotate_half(x) * sin with
// cos/sin = cat(freqs, freqs) and rotate_half(x) = cat(-x2, x1).
std::vector<float> rope_rotate_half(const std::vector<float>& x, int64_t rows, int64_t seq, int64_t dim, double theta,
                                    double sign) {
  std::vector<float> y(x.size());
  const int64_t half = dim / 2;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t s = 0; s < seq; ++s) {
      const float* in = &x[(r * seq + s) * dim];
      float* out = &y[(r * seq + s) * dim];
      for (int64_t d = 0; d < dim; ++d) {
        const double inv_freq = 1.0 / std::pow(theta, static_cast<double>(2 * (d % half)) / dim);
        const double angle = sign * s * inv_freq;
        const double rotated = d < half ? -in[d + half] : in[d - half];
        out[d] = static_cast<float>(in[d] * std::cos(angle) + rotated * std::sin(angle));
      }
    }
  return y;
}

// Interleaved form as a complex product: (x[2i] + j x[2i+1]) * exp(j * angle).
std::vector<float> rope_interleaved(const std::vector<float>& x, int64_t rows, int64_t seq, int64_t dim, double theta,
                                    double sign) {
  std::vector<float> y(x.size());
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t s = 0; s < seq; ++s)
      for (int64_t i = 0; i < dim / 2; ++i) {
        const int64_t base = (r * seq + s) * dim + 2 * i;
        const double angle = sign * s / std::pow(theta, 2.0 * i / dim);
        const std::complex<double> z = std::complex<double>(x[base], x[base + 1]) * std::polar(1.0, angle);
        y[base] = static_cast<float>(z.real());
        y[base + 1] = static_cast<float>(z.imag());
      }
  return y;
}

void check_close(const std::vector<float>& got, const std::vector<float>& want, double margin) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i);
    REQUIRE(got[i] == Approx(want[i]).margin(margin));
  }
}

}  // namespace

TEST_CASE("Rope matches the cos/sin formulas in both forms and inverts", "[ops][sequence]") {
  const Shape shape{2, 3, 7, 8};  // [batch, heads, S, D]
  const int64_t rows = 6, seq = 7, dim = 8;
  const auto x = random_floats(static_cast<size_t>(numel(shape)), 21);
  for (double theta : {10000.0, 500.0}) {
    for (int64_t inverse : {0, 1}) {
      INFO("theta " << theta << " inverse " << inverse);
      const double sign = inverse ? -1.0 : 1.0;
      auto half = run_op("Rope", {HostTensor::f32(shape, x)}, {{"theta", theta}, {"inverse", inverse}});
      REQUIRE(half.is_ok());
      check_close(half.value()[0].f32(), rope_rotate_half(x, rows, seq, dim, theta, sign), 1e-5);
      auto inter = run_op("Rope", {HostTensor::f32(shape, x)},
                          {{"theta", theta}, {"inverse", inverse}, {"interleaved", int64_t{1}}});
      REQUIRE(inter.is_ok());
      check_close(inter.value()[0].f32(), rope_interleaved(x, rows, seq, dim, theta, sign), 1e-5);
    }
  }
  // Rotating forward then inverse gives x back.
  auto forward = run_op("Rope", {HostTensor::f32(shape, x)});
  REQUIRE(forward.is_ok());
  auto back = run_op("Rope", {forward.value()[0]}, {{"inverse", int64_t{1}}});
  REQUIRE(back.is_ok());
  check_close(back.value()[0].f32(), x, 1e-5);
}

TEST_CASE("Rope: hand-computed position 1, D = 2", "[ops][sequence]") {
  // D = 2: one pair with frequency 1, so position s rotates by s radians.
  auto out = run_op("Rope", {HostTensor::f32({2, 2}, {1, 0, 1, 0})});
  REQUIRE(out.is_ok());
  const auto y = out.value()[0].f32();
  CHECK(y[0] == 1.0f);
  CHECK(y[1] == 0.0f);
  CHECK(y[2] == Approx(std::cos(1.0)));
  CHECK(y[3] == Approx(std::sin(1.0)));
}

TEST_CASE("Rope shape inference and errors", "[ops][sequence][errors]") {
  auto ok = infer("Rope", {f32({1, 4, 16, 64})}, {});
  REQUIRE(ok.is_ok());
  CHECK(ok.value()[0] == f32({1, 4, 16, 64}));
  auto odd = infer("Rope", {f32({4, 5})}, {});
  REQUIRE_FALSE(odd.is_ok());
  CHECK_THAT(odd.status().message(), Catch::Contains("the_node") && Catch::Contains("even"));
  CHECK_FALSE(infer("Rope", {f32({8})}, {}).is_ok());
  CHECK_FALSE(infer("Rope", {f32({4, 8})}, {{"theta", -1.0}}).is_ok());
  CHECK_FALSE(infer("Rope", {TensorType{DType::kI64, {4, 8}}}, {}).is_ok());
}

TEST_CASE("CausalMask hides future keys, offset by a cache", "[ops][sequence]") {
  // S = 2 queries over T = 4 keys: query i sees keys j <= i + 2.
  const std::vector<float> x{1, 2, 3, 4, 5, 6, 7, 8};
  const float inf = std::numeric_limits<float>::infinity();
  auto out = run_op("CausalMask", {HostTensor::f32({1, 2, 4}, x)});
  REQUIRE(out.is_ok());
  CHECK(out.value()[0].f32() == std::vector<float>{1, 2, 3, -inf, 5, 6, 7, 8});

  // Square, batched, custom value.
  auto square = run_op("CausalMask", {HostTensor::f32({2, 3, 3}, std::vector<float>(18, 1.0f))}, {{"value", -5.0}});
  REQUIRE(square.is_ok());
  const std::vector<float> one{1, -5, -5, 1, 1, -5, 1, 1, 1};
  std::vector<float> both = one;
  both.insert(both.end(), one.begin(), one.end());
  CHECK(square.value()[0].f32() == both);

  auto shape = infer("CausalMask", {f32({2, 4, 3, 5})}, {});
  REQUIRE(shape.is_ok());
  CHECK(shape.value()[0] == f32({2, 4, 3, 5}));
  auto bad = infer("CausalMask", {f32({4})}, {});
  REQUIRE_FALSE(bad.is_ok());
  CHECK_THAT(bad.status().message(), Catch::Contains("the_node"));
}

TEST_CASE("Dropout at inference is the identity", "[ops][sequence]") {
  const auto x = random_floats(10, 3);
  auto out = run_op("Dropout", {HostTensor::f32({10}, x)}, {{"ratio", 0.3}});
  REQUIRE(out.is_ok());
  CHECK(out.value()[0].f32() == x);
  auto shape = infer("Dropout", {f32({2, 5})}, {{"ratio", 0.5}});
  REQUIRE(shape.is_ok());
  CHECK(shape.value()[0] == f32({2, 5}));
  auto bad = infer("Dropout", {f32({10})}, {{"ratio", 1.0}});
  REQUIRE_FALSE(bad.is_ok());
  CHECK_THAT(bad.status().message(), Catch::Contains("the_node") && Catch::Contains("ratio"));
}

namespace {

// The mask contract, from its definition: splitmix64's finalizer chained over (seed, step, index).
uint64_t splitmix64(uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

uint8_t contract_keep(uint64_t seed, int64_t step, uint64_t index, double ratio) {
  const uint64_t bits = splitmix64(splitmix64(splitmix64(seed) ^ static_cast<uint64_t>(step)) ^ index);
  return (bits >> 40) >= static_cast<uint64_t>(ratio * 16777216.0) ? 1 : 0;
}

}  // namespace

TEST_CASE("DropoutTrain: mask from the (seed, step, index) hash, y = x * mask / (1 - ratio)", "[ops][sequence]") {
  const Shape shape{64, 64};
  const size_t n = static_cast<size_t>(numel(shape));
  const auto x = random_floats(n, 5);
  const double ratio = 0.25;
  const Attrs attrs{{"ratio", ratio}, {"seed", int64_t{42}}};
  auto run = [&](int64_t step) {
    auto out = run_op("DropoutTrain", {HostTensor::f32(shape, x), HostTensor::i64({}, {step})}, attrs);
    REQUIRE(out.is_ok());
    REQUIRE(out.value().size() == 2);
    CHECK(out.value()[1].dtype == DType::kU8);
    CHECK(out.value()[1].shape == shape);
    return out.value();
  };
  const auto a = run(7);
  const auto y = a[0].f32();
  const auto mask = a[1].values<uint8_t>();
  size_t dropped = 0;
  for (size_t i = 0; i < n; ++i) {
    INFO("element " << i);
    REQUIRE(mask[i] == contract_keep(42, 7, i, ratio));
    REQUIRE(y[i] == Approx(x[i] * mask[i] / (1.0 - ratio)));
    dropped += mask[i] == 0;
  }
  // 4096 draws at p = 0.25: the standard deviation of the dropped fraction is under 0.007.
  CHECK(static_cast<double>(dropped) / n == Approx(ratio).margin(0.03));

  // Deterministic per step, different across steps.
  CHECK(run(7)[1].bytes == a[1].bytes);
  CHECK(run(8)[1].bytes != a[1].bytes);

  // Ratio 0 keeps everything unscaled.
  auto keep_all = run_op("DropoutTrain", {HostTensor::f32(shape, x), HostTensor::i64({1}, {3})}, {{"ratio", 0.0}});
  REQUIRE(keep_all.is_ok());
  CHECK(keep_all.value()[0].f32() == x);
  CHECK(keep_all.value()[1].values<uint8_t>() == std::vector<uint8_t>(n, 1));
}

TEST_CASE("DropoutTrain shape inference and errors", "[ops][sequence][errors]") {
  const TensorType step{DType::kI64, {}};
  auto ok = infer("DropoutTrain", {f32({3, 5}), step}, {{"ratio", 0.1}});
  REQUIRE(ok.is_ok());
  REQUIRE(ok.value().size() == 2);
  CHECK(ok.value()[0] == f32({3, 5}));
  CHECK(ok.value()[1] == (TensorType{DType::kU8, {3, 5}}));

  auto float_step = infer("DropoutTrain", {f32({3, 5}), f32({})}, {});
  REQUIRE_FALSE(float_step.is_ok());
  CHECK_THAT(float_step.status().message(), Catch::Contains("the_node") && Catch::Contains("step"));
  CHECK_FALSE(infer("DropoutTrain", {f32({3, 5}), TensorType{DType::kI64, {2}}}, {}).is_ok());
  CHECK_FALSE(infer("DropoutTrain", {f32({3, 5}), step}, {{"ratio", -0.1}}).is_ok());
  CHECK_FALSE(infer("DropoutTrain", {f32({3, 5}), step}, {{"ratio", 1.0}}).is_ok());
}

TEST_CASE("cpu Rope matches ref: both pair layouts, inverse, a position input", "[ops][cpu][sequence]") {
  for (const int64_t interleaved : {int64_t{0}, int64_t{1}}) {
    for (const int64_t inverse : {int64_t{0}, int64_t{1}}) {
      const Attrs a{{"theta", 500.0}, {"interleaved", interleaved}, {"inverse", inverse}};
      INFO("interleaved " << interleaved << " inverse " << inverse);
      check_against_ref("cpu", {"Rope", {input({2, 3, 5, 8}, 1)}, a});
      check_against_ref("cpu", {"Rope", {input({3, 17, 64}, 2), int64s({}, {7})}, a});
      check_against_ref("cpu", {"Rope", {input({1, 2, 1, 64}, 3), int64s({1}, {1000})}, a});
    }
  }
}
