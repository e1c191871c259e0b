// Norm family gradients. Backward kernels are checked against finite differences of the forward
// ops written here in double (support/double_fd.hpp): L = sum(dy * y), differentiated numerically.
// The rules are checked end to end (autodiff, compile, run) against finite differences of the
// forward kernels (support/grad_check.hpp).
#include <catch2/catch.hpp>
#include <cmath>

#include "support/double_fd.hpp"
#include "support/expect_close.hpp"
#include "support/grad_check.hpp"
#include "support/op_runner.hpp"

using namespace pock;
using namespace pock::test;

namespace {

constexpr double kRtol = 1e-4, kAtol = 1e-5;

std::vector<HostTensor> run(const std::string& op, const std::vector<HostTensor>& inputs, const Attrs& attrs = {}) {
  auto out = run_op(op, inputs, attrs);
  INFO(op << ": " << out.status().to_string());
  REQUIRE(out.is_ok());
  return out.value();
}

// Batch norm over x [N, C, inner] with batch statistics (biased variance).
struct BatchNormDouble {
  int64_t n, c, inner;
  double eps;
  std::vector<double> forward(const std::vector<double>& x, const std::vector<double>& gamma,
                              const std::vector<double>& beta, std::vector<double>* mean = nullptr,
                              std::vector<double>* invstd = nullptr) const {
    std::vector<double> y(x.size());
    for (int64_t ch = 0; ch < c; ++ch) {
      double m = 0.0, v = 0.0;
      for (int64_t b = 0; b < n; ++b)
        for (int64_t i = 0; i < inner; ++i) m += x[(b * c + ch) * inner + i];
      m /= static_cast<double>(n * inner);
      for (int64_t b = 0; b < n; ++b)
        for (int64_t i = 0; i < inner; ++i) v += std::pow(x[(b * c + ch) * inner + i] - m, 2);
      v /= static_cast<double>(n * inner);
      const double is = 1.0 / std::sqrt(v + eps);
      if (mean) mean->push_back(m);
      if (invstd) invstd->push_back(is);
      for (int64_t b = 0; b < n; ++b)
        for (int64_t i = 0; i < inner; ++i) {
          const int64_t at = (b * c + ch) * inner + i;
          y[at] = (x[at] - m) * is * gamma[ch] + beta[ch];
        }
    }
    return y;
  }
};

}  // namespace

TEST_CASE("BatchNormTrainGrad and BatchNormParamGrad match finite differences of batch norm", "[ops][grad][norm]") {
  for (const Shape& shape : {Shape{4, 3}, Shape{2, 3, 4, 5}, Shape{3, 2, 7}}) {
    DYNAMIC_SECTION("x " << shape_str(shape)) {
      const int64_t c = shape[1], inner = numel(shape) / (shape[0] * c);
      const BatchNormDouble bn{shape[0], c, inner, 1e-5};
      const std::vector<float> xf = random_floats(numel(shape), 1, -2.0f, 2.0f);
      const std::vector<float> gf = random_floats(c, 2, 0.5f, 1.5f), bf = random_floats(c, 3);
      const std::vector<float> dyf = random_floats(numel(shape), 4);
      const std::vector<double> x = to_double(xf), gamma = to_double(gf), beta = to_double(bf), dy = to_double(dyf);
      std::vector<double> mean, invstd;
      bn.forward(x, gamma, beta, &mean, &invstd);

      const auto want_dx = numeric_gradient(
          [&](const std::vector<double>& v) { return weighted_sum(dy, bn.forward(v, gamma, beta)); }, x);
      const auto want_dgamma = numeric_gradient(
          [&](const std::vector<double>& v) { return weighted_sum(dy, bn.forward(x, v, beta)); }, gamma);
      const auto want_dbeta = numeric_gradient(
          [&](const std::vector<double>& v) { return weighted_sum(dy, bn.forward(x, gamma, v)); }, beta);

      const HostTensor dy_t = HostTensor::f32(shape, dyf), x_t = HostTensor::f32(shape, xf);
      const HostTensor mean_t = HostTensor::f32({c}, to_float(mean)), invstd_t = HostTensor::f32({c}, to_float(invstd));
      const auto grads = run("BatchNormTrainGrad", {dy_t, x_t, mean_t, invstd_t, HostTensor::f32({c}, gf)});
      CHECK(mismatches(grads[0].f32(), want_dx, kRtol, kAtol) == "");
      CHECK(mismatches(grads[1].f32(), want_dgamma, kRtol, kAtol) == "");
      CHECK(mismatches(grads[2].f32(), want_dbeta, kRtol, kAtol) == "");

      const auto params = run("BatchNormParamGrad", {dy_t, x_t, mean_t, invstd_t});
      CHECK(mismatches(params[0].f32(), want_dgamma, kRtol, kAtol) == "");
      CHECK(mismatches(params[1].f32(), want_dbeta, kRtol, kAtol) == "");
    }
  }
}

namespace {

// LayerNorm / RMSNorm over x seen as [rows, features].
struct RowNormDouble {
  bool rms;
  int64_t rows, features;
  double eps;
  std::vector<double> forward(const std::vector<double>& x, const std::vector<double>& gamma,
                              const std::vector<double>& beta, std::vector<double>* stat0 = nullptr,
                              std::vector<double>* stat1 = nullptr) const {
    std::vector<double> y(x.size());
    for (int64_t r = 0; r < rows; ++r) {
      const double* row = x.data() + r * features;
      double mean = 0.0, var = 0.0;
      if (!rms) {
        for (int64_t j = 0; j < features; ++j) mean += row[j];
        mean /= static_cast<double>(features);
      }
      for (int64_t j = 0; j < features; ++j) var += (row[j] - mean) * (row[j] - mean);
      const double inv = 1.0 / std::sqrt(var / static_cast<double>(features) + eps);
      if (stat0) stat0->push_back(rms ? inv : mean);
      if (stat1) stat1->push_back(inv);
      for (int64_t j = 0; j < features; ++j) {
        const double g = gamma.empty() ? 1.0 : gamma[j], b = beta.empty() ? 0.0 : beta[j];
        y[r * features + j] = (row[j] - mean) * inv * g + b;
      }
    }
    return y;
  }
};

struct RowNormCase {
  Shape shape;
  int64_t axis;
  bool affine;
};

const RowNormCase kRowNormCases[] = {
    {{3, 8}, -1, true}, {{3, 8}, -1, false}, {{2, 3, 4}, 1, true}, {{2, 3, 4}, 1, false}, {{5}, 0, true},
};

}  // namespace

TEST_CASE("LayerNormGrad matches finite differences of layer norm", "[ops][grad][norm]") {
  for (const RowNormCase& k : kRowNormCases) {
    DYNAMIC_SECTION("x " << shape_str(k.shape) << " axis " << k.axis << (k.affine ? " affine" : " plain")) {
      const size_t axis = static_cast<size_t>(k.axis < 0 ? k.axis + static_cast<int64_t>(k.shape.size()) : k.axis);
      const Shape features_shape(k.shape.begin() + static_cast<int64_t>(axis), k.shape.end());
      const Shape rows_shape(k.shape.begin(), k.shape.begin() + static_cast<int64_t>(axis));
      const int64_t features = numel(features_shape), rows = numel(k.shape) / features;
      const RowNormDouble ln{false, rows, features, 1e-5};
      const std::vector<float> xf = random_floats(numel(k.shape), 11, -2.0f, 2.0f),
                               dyf = random_floats(numel(k.shape), 12);
      const std::vector<float> gf = random_floats(features, 13, 0.5f, 1.5f), bf = random_floats(features, 14);
      const std::vector<double> x = to_double(xf), dy = to_double(dyf);
      const std::vector<double> gamma = k.affine ? to_double(gf) : std::vector<double>{};
      const std::vector<double> beta = k.affine ? to_double(bf) : std::vector<double>{};
      std::vector<double> mean, invstd;
      ln.forward(x, gamma, beta, &mean, &invstd);

      std::vector<HostTensor> inputs{HostTensor::f32(k.shape, dyf), HostTensor::f32(k.shape, xf),
                                     HostTensor::f32(rows_shape, to_float(mean)),
                                     HostTensor::f32(rows_shape, to_float(invstd))};
      if (k.affine) inputs.push_back(HostTensor::f32(features_shape, gf));
      const auto grads = run("LayerNormGrad", inputs, Attrs{{"axis", k.axis}});
      const auto want_dx = numeric_gradient(
          [&](const std::vector<double>& v) { return weighted_sum(dy, ln.forward(v, gamma, beta)); }, x);
      CHECK(mismatches(grads[0].f32(), want_dx, kRtol, kAtol) == "");
      // Without affine inputs the op still reports what dgamma and dbeta would be at gamma = 1, beta = 0.
      const std::vector<double> g1 = k.affine ? gamma : std::vector<double>(features, 1.0);
      const std::vector<double> b0 = k.affine ? beta : std::vector<double>(features, 0.0);
      const auto want_dgamma =
          numeric_gradient([&](const std::vector<double>& v) { return weighted_sum(dy, ln.forward(x, v, b0)); }, g1);
      const auto want_dbeta =
          numeric_gradient([&](const std::vector<double>& v) { return weighted_sum(dy, ln.forward(x, g1, v)); }, b0);
      CHECK(mismatches(grads[1].f32(), want_dgamma, kRtol, kAtol) == "");
      CHECK(mismatches(grads[2].f32(), want_dbeta, kRtol, kAtol) == "");
    }
  }
}

TEST_CASE("RMSNormGrad matches finite differences of RMS norm", "[ops][grad][norm]") {
  for (const RowNormCase& k : kRowNormCases) {
    DYNAMIC_SECTION("x " << shape_str(k.shape) << " axis " << k.axis << (k.affine ? " affine" : " plain")) {
      const size_t axis = static_cast<size_t>(k.axis < 0 ? k.axis + static_cast<int64_t>(k.shape.size()) : k.axis);
      const Shape features_shape(k.shape.begin() + static_cast<int64_t>(axis), k.shape.end());
      const Shape rows_shape(k.shape.begin(), k.shape.begin() + static_cast<int64_t>(axis));
      const int64_t features = numel(features_shape), rows = numel(k.shape) / features;
      const RowNormDouble rms{true, rows, features, 1e-6};
      const std::vector<float> xf = random_floats(numel(k.shape), 21, -2.0f, 2.0f),
                               dyf = random_floats(numel(k.shape), 22);
      const std::vector<float> gf = random_floats(features, 23, 0.5f, 1.5f);
      const std::vector<double> x = to_double(xf), dy = to_double(dyf);
      const std::vector<double> gamma = k.affine ? to_double(gf) : std::vector<double>{};
      std::vector<double> invrms;
      rms.forward(x, gamma, {}, &invrms);

      std::vector<HostTensor> inputs{HostTensor::f32(k.shape, dyf), HostTensor::f32(k.shape, xf),
                                     HostTensor::f32(rows_shape, to_float(invrms))};
      if (k.affine) inputs.push_back(HostTensor::f32(features_shape, gf));
      const auto grads = run("RMSNormGrad", inputs, Attrs{{"axis", k.axis}});
      const auto want_dx = numeric_gradient(
          [&](const std::vector<double>& v) { return weighted_sum(dy, rms.forward(v, gamma, {})); }, x);
      CHECK(mismatches(grads[0].f32(), want_dx, kRtol, kAtol) == "");
      const std::vector<double> g1 = k.affine ? gamma : std::vector<double>(features, 1.0);
      const auto want_dgamma =
          numeric_gradient([&](const std::vector<double>& v) { return weighted_sum(dy, rms.forward(x, v, {})); }, g1);
      CHECK(mismatches(grads[1].f32(), want_dgamma, kRtol, kAtol) == "");
    }
  }
}

namespace {

// Softmax (or log-softmax) along `axis` of x seen as [outer, extent, inner].
std::vector<double> softmax_double(const std::vector<double>& x, int64_t outer, int64_t extent, int64_t inner,
                                   bool log) {
  std::vector<double> y(x.size());
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      double sum = 0.0;
      for (int64_t k = 0; k < extent; ++k) sum += std::exp(x[(o * extent + k) * inner + i]);
      for (int64_t k = 0; k < extent; ++k) {
        const int64_t at = (o * extent + k) * inner + i;
        y[at] = log ? x[at] - std::log(sum) : std::exp(x[at]) / sum;
      }
    }
  }
  return y;
}

}  // namespace

TEST_CASE("SoftmaxGrad and LogSoftmaxGrad match finite differences", "[ops][grad][norm]") {
  const Shape shape{2, 5, 3};
  for (bool log : {false, true}) {
    for (int64_t axis : {int64_t{1}, int64_t{-1}}) {
      DYNAMIC_SECTION((log ? "LogSoftmax" : "Softmax") << " axis " << axis) {
        const int64_t a = axis < 0 ? axis + 3 : axis;
        const int64_t outer = a == 1 ? 2 : 10, extent = shape[static_cast<size_t>(a)], inner = a == 1 ? 3 : 1;
        const std::vector<float> xf = random_floats(numel(shape), 31, -3.0f, 3.0f),
                                 dyf = random_floats(numel(shape), 32);
        const std::vector<double> x = to_double(xf), dy = to_double(dyf);
        const std::vector<double> y = softmax_double(x, outer, extent, inner, log);
        const auto want = numeric_gradient(
            [&](const std::vector<double>& v) {
              return weighted_sum(dy, softmax_double(v, outer, extent, inner, log));
            },
            x);
        const auto dx = run(log ? "LogSoftmaxGrad" : "SoftmaxGrad",
                            {HostTensor::f32(shape, dyf), HostTensor::f32(shape, to_float(y))}, Attrs{{"axis", axis}});
        CHECK(mismatches(dx[0].f32(), want, kRtol, kAtol) == "");
      }
    }
  }
}

// ---- Gradient rules, end to end through autodiff, against finite differences ----------------

namespace {

GradCheckOptions only_output_0() {
  GradCheckOptions o;
  o.loss_outputs = {0};  // statistics outputs carry no gradient
  return o;
}

}  // namespace

TEST_CASE("BatchNorm gradients match finite differences", "[ops][grad][norm][fd]") {
  for (const Shape& shape : {Shape{4, 3}, Shape{2, 3, 3, 4}}) {
    const int64_t c = shape[1];
    std::vector<HostTensor> inputs{
        HostTensor::f32(shape, random_floats(numel(shape), 41, -2.0f, 2.0f)),
        HostTensor::f32({c}, random_floats(c, 42, 0.5f, 1.5f)), HostTensor::f32({c}, random_floats(c, 43)),
        HostTensor::f32({c}, random_floats(c, 44)), HostTensor::f32({c}, random_floats(c, 45, 0.5f, 2.0f))};
    DYNAMIC_SECTION("training form, x " << shape_str(shape)) {
      CHECK(check_op_gradients("BatchNormTrain", inputs, {}, {true, true, true, false, false}, only_output_0()));
    }
    DYNAMIC_SECTION("bias and scale only (no dx), x " << shape_str(shape)) {
      CHECK(check_op_gradients("BatchNormTrain", inputs, {}, {false, true, true, false, false}, only_output_0()));
    }
    DYNAMIC_SECTION("inference form with frozen statistics, x " << shape_str(shape)) {
      CHECK(check_op_gradients("BatchNorm", inputs, Attrs{{"eps", 1e-3}}, {true, false, false, false, false}));
    }
    // Bias-only schemes: the shift's gradient is a sum of dy, computed without reading x.
    DYNAMIC_SECTION("shift only, training form, x " << shape_str(shape)) {
      CHECK(check_op_gradients("BatchNormTrain", inputs, {}, {false, false, true, false, false}, only_output_0()));
    }
    DYNAMIC_SECTION("input and shift, inference form, x " << shape_str(shape)) {
      CHECK(check_op_gradients("BatchNorm", inputs, Attrs{{"eps", 1e-3}}, {true, false, true, false, false}));
    }
    DYNAMIC_SECTION("shift only, inference form, x " << shape_str(shape)) {
      CHECK(check_op_gradients("BatchNorm", inputs, Attrs{{"eps", 1e-3}}, {false, false, true, false, false}));
    }
  }
}

TEST_CASE("LayerNorm and RMSNorm gradients match finite differences", "[ops][grad][norm][fd]") {
  for (const RowNormCase& k : kRowNormCases) {
    const size_t axis = static_cast<size_t>(k.axis < 0 ? k.axis + static_cast<int64_t>(k.shape.size()) : k.axis);
    const Shape features(k.shape.begin() + static_cast<int64_t>(axis), k.shape.end());
    const HostTensor x = HostTensor::f32(k.shape, random_floats(numel(k.shape), 51, -2.0f, 2.0f));
    const HostTensor gamma = HostTensor::f32(features, random_floats(numel(features), 52, 0.5f, 1.5f));
    const HostTensor beta = HostTensor::f32(features, random_floats(numel(features), 53));
    const Attrs attrs{{"axis", k.axis}};
    DYNAMIC_SECTION("LayerNorm x " << shape_str(k.shape) << " axis " << k.axis << (k.affine ? " affine" : " plain")) {
      if (k.affine) {
        CHECK(check_op_gradients("LayerNorm", {x, gamma, beta}, attrs, {true, true, true}, only_output_0()));
      } else {
        CHECK(check_op_gradients("LayerNorm", {x}, attrs, {true}, only_output_0()));
      }
    }
    DYNAMIC_SECTION("RMSNorm x " << shape_str(k.shape) << " axis " << k.axis << (k.affine ? " affine" : " plain")) {
      if (k.affine) {
        CHECK(check_op_gradients("RMSNorm", {x, gamma}, attrs, {true, true}, only_output_0()));
      } else {
        CHECK(check_op_gradients("RMSNorm", {x}, attrs, {true}, only_output_0()));
      }
    }
  }
  SECTION("LayerNorm with beta but no gamma") {
    const HostTensor x = HostTensor::f32({3, 4}, random_floats(12, 54));
    GradCheckOptions o = only_output_0();
    o.omitted = {false, true, false};
    CHECK(check_op_gradients("LayerNorm", {x, x, HostTensor::f32({4}, random_floats(4, 55))}, {}, {true, false, true},
                             o));
  }
}

TEST_CASE("Softmax and LogSoftmax gradients match finite differences", "[ops][grad][norm][fd]") {
  const Shape shape{2, 5, 3};
  for (const char* op : {"Softmax", "LogSoftmax"}) {
    for (int64_t axis : {int64_t{1}, int64_t{-1}}) {
      DYNAMIC_SECTION(op << " axis " << axis) {
        CHECK(check_op_gradients(op, {HostTensor::f32(shape, random_floats(numel(shape), 61, -3.0f, 3.0f))},
                                 Attrs{{"axis", axis}}, {true}));
      }
    }
  }
}

TEST_CASE("LayerNorm refuses gradients through its statistics", "[ops][grad][norm][fd]") {
  const HostTensor x = HostTensor::f32({3, 4}, random_floats(12, 71));
  const GradCheckReport report = check_op_gradients("LayerNorm", {x}, {}, {true});  // loss reads mean and invstd too
  CHECK_FALSE(report);
  CHECK_THAT(report.message, Catch::Contains("statistic"));
}
