// LinearInt8 and LinearInt8InputGrad, the reference kernels (the oracle every backend is checked
// against): against this file's own rendering of the definition in docs/ops.md (quantize a row:
// amax, q = round_half_away(v * 127 / amax); int32 products; scales applied in float), and
// against f32 Linear with the dequantized weight, which they approximate within the rounding of
// one int8 step per factor.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <vector>

#include "support/op_runner.hpp"

using namespace pock;
using namespace pock::test;

namespace {

struct Quantized {
  std::vector<int32_t> q;
  double scale;
};

// The definition, written independently of kernels/int8_rows.h (doubles where it can).
Quantized quantize(const std::vector<float>& v) {
  float amax = 0.0f;
  for (float x : v) amax = std::max(amax, std::fabs(x));
  Quantized out{std::vector<int32_t>(v.size(), 0), amax / 127.0f};
  if (amax == 0.0f) return out;
  const float inv = 127.0f / amax;
  for (size_t i = 0; i < v.size(); ++i) {
    const float t = v[i] * inv;
    out.q[i] = static_cast<int32_t>(std::round(std::max(-127.0f, std::min(127.0f, t))));
  }
  return out;
}

std::vector<int8_t> random_int8(size_t n, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int> d(-127, 127);
  std::vector<int8_t> v(n);
  for (int8_t& x : v) x = static_cast<int8_t>(d(gen));
  return v;
}

constexpr int64_t kRows = 5, kK = 37, kN = 11;

}  // namespace

TEST_CASE("LinearInt8 (ref) is int8 rows times int8 weights, scaled", "[ops][int8]") {
  const std::vector<float> x = random_floats(kRows * kK, 1, -3, 3);
  const std::vector<int8_t> w = random_int8(kN * kK, 2);
  const std::vector<float> scale = random_floats(kN, 3, 0.001f, 0.05f);
  const std::vector<float> bias = random_floats(kN, 4);
  auto out = run_op("LinearInt8", {HostTensor::f32({kRows, kK}, x), HostTensor::make(DType::kI8, {kN, kK}, w),
                                   HostTensor::f32({kN}, scale), HostTensor::f32({kN}, bias)},
                    {}, {}, "ref");
  INFO(out.status().message());
  REQUIRE(out.is_ok());
  const std::vector<float> y = (*out)[0].f32();
  for (int64_t r = 0; r < kRows; ++r) {
    const Quantized qx = quantize(std::vector<float>(x.begin() + r * kK, x.begin() + (r + 1) * kK));
    for (int64_t j = 0; j < kN; ++j) {
      int64_t acc = 0;
      for (int64_t p = 0; p < kK; ++p) acc += int64_t{qx.q[p]} * w[j * kK + p];
      const double want = static_cast<double>(acc) * qx.scale * scale[j] + bias[j];
      CHECK(std::fabs(y[r * kN + j] - want) <= 1e-5 * std::max(1.0, std::fabs(want)));
    }
  }
}

TEST_CASE("LinearInt8 (ref) approximates Linear with the dequantized weight", "[ops][int8]") {
  const std::vector<float> x = random_floats(kRows * kK, 5, -2, 2);
  const std::vector<int8_t> w = random_int8(kN * kK, 6);
  const std::vector<float> scale = random_floats(kN, 7, 0.01f, 0.02f);
  std::vector<float> dequantized(w.size());
  for (int64_t j = 0; j < kN; ++j) {
    for (int64_t p = 0; p < kK; ++p) dequantized[j * kK + p] = w[j * kK + p] * scale[j];
  }
  auto int8 = run_op("LinearInt8", {HostTensor::f32({kRows, kK}, x), HostTensor::make(DType::kI8, {kN, kK}, w),
                                    HostTensor::f32({kN}, scale)}, {}, {}, "ref");
  auto f32 = run_op("Linear", {HostTensor::f32({kRows, kK}, x), HostTensor::f32({kN, kK}, dequantized)}, {}, {}, "ref");
  REQUIRE(int8.is_ok());
  REQUIRE(f32.is_ok());
  const std::vector<float> a = (*int8)[0].f32(), b = (*f32)[0].f32();
  for (size_t i = 0; i < a.size(); ++i) {
    // Each x is off by at most half a step (amax / 254) of its row: the product by at most
    // K * amax / 254 * max|w| (here 37 * 2 / 254 * 127 * 0.02 = 0.74), far less in practice.
    CHECK(std::fabs(a[i] - b[i]) <= 0.74f);
  }
  double err = 0, norm = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    err += (a[i] - b[i]) * (a[i] - b[i]);
    norm += b[i] * b[i];
  }
  CHECK(std::sqrt(err / norm) < 0.02);  // relative error ~1%: the int8 step of x
}

TEST_CASE("LinearInt8InputGrad (ref) quantizes dy * scale and multiplies by the transposed weight", "[ops][int8]") {
  const std::vector<float> dy = random_floats(kRows * kN, 8, -1, 1);
  const std::vector<int8_t> wt = random_int8(kK * kN, 9);  // [K, N]
  const std::vector<float> scale = random_floats(kN, 10, 0.001f, 0.05f);
  auto out = run_op("LinearInt8InputGrad", {HostTensor::f32({kRows, kN}, dy), HostTensor::make(DType::kI8, {kK, kN}, wt),
                                            HostTensor::f32({kN}, scale)}, {}, {}, "ref");
  INFO(out.status().message());
  REQUIRE(out.is_ok());
  const std::vector<float> dx = (*out)[0].f32();
  for (int64_t m = 0; m < kRows; ++m) {
    std::vector<float> g(kN);
    for (int64_t j = 0; j < kN; ++j) g[j] = dy[m * kN + j] * scale[j];
    const Quantized qg = quantize(g);
    for (int64_t p = 0; p < kK; ++p) {
      int64_t acc = 0;
      for (int64_t j = 0; j < kN; ++j) acc += int64_t{qg.q[j]} * wt[p * kN + j];
      const double want = static_cast<double>(acc) * qg.scale;
      CHECK(std::fabs(dx[m * kK + p] - want) <= 1e-5 * std::max(1.0, std::fabs(want)));
    }
  }
}

TEST_CASE("LinearInt8: a NaN in a row makes that row's outputs NaN", "[ops][int8]") {
  std::vector<float> x = random_floats(2 * kK, 11);
  x[3] = std::nanf("");
  auto out = run_op("LinearInt8", {HostTensor::f32({2, kK}, x), HostTensor::make(DType::kI8, {kN, kK}, random_int8(kN * kK, 12)),
                                   HostTensor::f32({kN}, random_floats(kN, 13, 0.01f, 0.02f))}, {}, {}, "ref");
  REQUIRE(out.is_ok());
  const std::vector<float> y = (*out)[0].f32();
  for (int64_t j = 0; j < kN; ++j) {
    CHECK(std::isnan(y[j]));          // row 0 holds the NaN
    CHECK(std::isfinite(y[kN + j]));  // row 1 does not
  }
}
