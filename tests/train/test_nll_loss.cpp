// NllLoss (ONNX's NegativeLogLikelihoodLoss: class axis 1, reduction none/sum/mean, class
// weights, ignore_index): values against ONNX's defining formula written out here, gradients
// against finite differences, and the errors for bad labels and attributes.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "support/backend_under_test.hpp"
#include "support/expect_close.hpp"
#include "support/grad_check.hpp"

using namespace pock;
using namespace pock::test;

namespace {

// ONNX's reference: loss[n, d] = -w[t] x[n, t, d] (0 where t == ignore); "mean" divides the sum by
// the weights of the labels counted. x is [N, C, D] flattened, labels [N, D].
std::vector<double> onnx_nll(const std::vector<float>& x, const std::vector<int64_t>& labels, int64_t batch, int64_t classes,
                             const std::vector<float>& weight, const std::string& reduction, int64_t ignore) {
  const int64_t inner = static_cast<int64_t>(x.size()) / batch / classes;
  std::vector<double> loss;
  double total = 0, weights = 0;
  for (size_t r = 0; r < labels.size(); ++r) {
    const int64_t t = labels[r], n = static_cast<int64_t>(r) / inner, d = static_cast<int64_t>(r) % inner;
    if (t == ignore) {
      loss.push_back(0.0);
      continue;
    }
    const double w = weight.empty() ? 1.0 : weight[static_cast<size_t>(t)];
    loss.push_back(-w * x[static_cast<size_t>((n * classes + t) * inner + d)]);
    total += loss.back();
    weights += w;
  }
  if (reduction == "none") return loss;
  return {reduction == "sum" ? total : total / weights};
}

Attrs nll_attrs(const std::string& reduction, int64_t ignore) { return {{"reduction", reduction}, {"ignore_index", ignore}}; }

}  // namespace

TEST_CASE("NllLoss matches ONNX's formula for every reduction, with weights and ignore_index", "[train][loss]") {
  const Shape shape{2, 3, 2};  // [N, C, d1]
  const std::vector<float> x = random_floats(12, 41, -3.0f, 0.0f);
  const std::vector<int64_t> labels{2, 0, 1, 1};
  const std::vector<float> weight{0.5f, 2.0f, 1.25f};
  for (const char* reduction : {"none", "sum", "mean"}) {
    for (const bool weighted : {false, true}) {
      for (const int64_t ignore : {int64_t{1}, int64_t{-7}}) {  // -7 matches no label
        INFO(reduction << " weighted " << weighted << " ignore " << ignore);
        std::vector<HostTensor> in{HostTensor::f32(shape, x), HostTensor::i64({2, 2}, labels)};
        if (weighted) in.push_back(HostTensor::f32({3}, weight));
        auto out = run_op_under_test("NllLoss", in, nll_attrs(reduction, ignore));
        REQUIRE(out.is_ok());
        CHECK(out.value()[0].shape == (std::string(reduction) == "none" ? Shape{2, 2} : Shape{}));
        CHECK(mismatches(out.value()[0].f32(), onnx_nll(x, labels, 2, 3, weighted ? weight : std::vector<float>{}, reduction, ignore)) ==
              "");
      }
    }
  }
}

TEST_CASE("NllLoss without ignore_index ignores no label (not PyTorch's -100)", "[train][loss]") {
  auto out = run_op_under_test("NllLoss", {HostTensor::f32({2, 2}, {-1, -2, -3, -4}), HostTensor::i64({2}, {-100, 1})},
                               Attrs{{"reduction", std::string("sum")}});
  REQUIRE_FALSE(out.is_ok());
  CHECK_THAT(out.status().message(), Catch::Contains("label -100"));
}

TEST_CASE("NllLoss refuses bad shapes and attributes by name", "[train][loss]") {
  Graph g;
  const TensorId x = g.add_input("x", DType::kF32, {2, 3, 4});
  const TensorId labels = g.add_input("labels", DType::kI64, {2, 4});
  const TensorId wrong_labels = g.add_input("wrong", DType::kI64, {2, 3});
  const TensorId weight = g.add_input("w", DType::kF32, {4});
  auto bad_labels = g.add_node("NllLoss", {x, wrong_labels}, {}, "loss");
  REQUIRE_FALSE(bad_labels.is_ok());
  CHECK_THAT(bad_labels.status().message(), Catch::Contains("NllLoss 'loss'") && Catch::Contains("labels"));
  auto bad_weight = g.add_node("NllLoss", {x, labels, weight}, {}, "loss");
  REQUIRE_FALSE(bad_weight.is_ok());
  CHECK_THAT(bad_weight.status().message(), Catch::Contains("weight"));
  auto bad_reduction = g.add_node("NllLoss", {x, labels}, Attrs{{"reduction", std::string("max")}}, "loss");
  REQUIRE_FALSE(bad_reduction.is_ok());
  CHECK_THAT(bad_reduction.status().message(), Catch::Contains("reduction"));
}

TEST_CASE("NllLoss gradients match finite differences", "[train][loss][grad]") {
  const HostTensor x = HostTensor::f32({2, 3, 2}, random_floats(12, 43, -3.0f, 0.0f));
  const HostTensor labels = HostTensor::i64({2, 2}, {2, 0, 1, 1});
  const HostTensor weight = HostTensor::f32({3}, {0.5f, 2.0f, 1.25f});
  for (const char* reduction : {"none", "sum", "mean"}) {
    INFO(reduction);
    CHECK(check_op_gradients("NllLoss", {x, labels}, nll_attrs(reduction, 0), {true, false}));
    CHECK(check_op_gradients("NllLoss", {x, labels, weight}, nll_attrs(reduction, 1), {true, false, false}));
  }
}
