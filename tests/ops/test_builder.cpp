// ModelBuilder: a small MLP built in C++ runs end to end and matches a hand computation; sticky
// errors; parameter initializers.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>

#include "pock/compiler/builder.hpp"
#include "pock/compiler/compiler.hpp"
#include "pock/engine.hpp"
#include "support/expect_close.hpp"
#include "support/op_runner.hpp"

using namespace pock;
using namespace pock::test;

namespace {

std::vector<float> values_of(const Graph& g, TensorId id) {
  const auto& bytes = *g.tensor(id).data;
  std::vector<float> v(bytes.size() / sizeof(float));
  std::memcpy(v.data(), bytes.data(), bytes.size());
  return v;
}

// Compiles `g` for inference, feeds `x` and returns the named outputs.
Result<std::vector<std::vector<float>>> infer(const Graph& g, const std::vector<float>& x,
                                              const std::vector<std::string>& outputs) {
  auto blob = compile(g, nullptr);
  if (!blob.is_ok()) return blob.status();
  auto engine = Engine::open_buffer(blob->data(), blob->size());
  if (!engine.is_ok()) return engine.status();
  POCK_RETURN_IF_ERROR(engine->set_input("x", x));
  POCK_RETURN_IF_ERROR(engine->infer());
  std::vector<std::vector<float>> result;
  for (const std::string& name : outputs) {
    auto v = engine->output<float>(name);
    if (!v.is_ok()) return v.status();
    result.push_back(std::move(v.value()));
  }
  return result;
}

}  // namespace

TEST_CASE("an MLP built with ModelBuilder matches a hand computation", "[builder]") {
  ModelBuilder b;
  const TensorId x = b.input("x", DType::kF32, {2, 3});
  const TensorId w1 = b.parameter("fc1.weight", {4, 3}, {1, 0, -1, 0.5f, 0.5f, 0.5f, -1, -1, 0, 2, 0, 0});
  const TensorId b1 = b.parameter("fc1.bias", {4}, {0, -1, 1, -3});
  const TensorId w2 = b.parameter("fc2.weight", {2, 4}, {1, 2, 3, 4, -1, 0.5f, -2, 1});
  const TensorId b2 = b.parameter("fc2.bias", {2}, {0.5f, -0.5f});
  const TensorId h = b.relu(b.named("fc1").linear(x, w1, b1));
  const TensorId logits = b.named("fc2").linear(h, w2, b2);
  const TensorId probs = b.softmax(logits);
  b.output(logits, "logits");
  b.output(probs, "probs");
  REQUIRE(b.ok());
  CHECK(b.shape(h) == Shape{2, 4});
  auto graph = b.finish();
  REQUIRE(graph.is_ok());
  CHECK(graph->nodes()[0].name == "fc1");

  // x = [1, 2, 3]:  fc1 = [-2, 2, -2, -1] -> relu [0, 2, 0, 0] -> fc2 = [2*2 + 0.5, 0.5*2 - 0.5] = [4.5, 0.5]
  // x = [-1, 0, 1]: fc1 = [-2, -1, 2, -5] -> relu [0, 0, 2, 0] -> fc2 = [3*2 + 0.5, -2*2 - 0.5] = [6.5, -4.5]
  auto out = infer(graph.value(), {1, 2, 3, -1, 0, 1}, {"logits", "probs"});
  REQUIRE(out.is_ok());
  CHECK(out.value()[0] == std::vector<float>{4.5f, 0.5f, 6.5f, -4.5f});
  const double p1 = 1.0 / (1.0 + std::exp(-4.0)), p2 = 1.0 / (1.0 + std::exp(-11.0));
  CHECK(mismatches(out.value()[1], {p1, 1 - p1, p2, 1 - p2}) == "");
}

TEST_CASE("a Kaiming-initialized MLP matches naive loops", "[builder]") {
  const int64_t batch = 5, in = 8, hidden = 16, out_features = 3;
  ModelBuilder b;
  const TensorId x = b.input("x", DType::kF32, {batch, in});
  const TensorId w1 = b.parameter_kaiming_uniform("fc1.weight", {hidden, in}, 1);
  const TensorId b1 = b.parameter_kaiming_uniform("fc1.bias", {hidden}, 2, in);
  const TensorId w2 = b.parameter_kaiming_uniform("fc2.weight", {out_features, hidden}, 3);
  const TensorId h = b.gelu(b.linear(x, w1, b1));
  b.output(b.linear(h, w2), "logits");
  auto graph = b.finish();
  REQUIRE(graph.is_ok());
  const Graph& g = graph.value();
  const auto W1 = values_of(g, w1), B1 = values_of(g, b1), W2 = values_of(g, w2);
  const auto xs = test::random_floats(static_cast<size_t>(batch * in), 5);
  std::vector<double> want;
  for (int64_t r = 0; r < batch; ++r) {
    std::vector<double> hid(static_cast<size_t>(hidden));
    for (int64_t j = 0; j < hidden; ++j) {
      double acc = B1[j];
      for (int64_t p = 0; p < in; ++p) acc += static_cast<double>(xs[r * in + p]) * W1[j * in + p];
      hid[j] = 0.5 * acc * (1.0 + std::erf(acc / std::sqrt(2.0)));
    }
    for (int64_t j = 0; j < out_features; ++j) {
      double acc = 0.0;
      for (int64_t p = 0; p < hidden; ++p) acc += hid[p] * W2[j * hidden + p];
      want.push_back(acc);
    }
  }
  auto out = infer(g, xs, {"logits"});
  REQUIRE(out.is_ok());
  CHECK(mismatches(out.value()[0], want) == "");
}

TEST_CASE("ModelBuilder errors are sticky and name the node", "[builder]") {
  ModelBuilder b;
  const TensorId x = b.input("x", DType::kF32, {2, 3});
  const TensorId w = b.parameter_fill("w", {4, 5}, 0.0f);
  const TensorId y = b.named("fc1").linear(x, w);
  CHECK(y == kNoTensor);
  REQUIRE_FALSE(b.ok());
  CHECK(b.status().code() == Code::kShapeMismatch);
  CHECK_THAT(b.status().message(), Catch::Contains("Linear 'fc1'"));
  const std::string first = b.status().message();

  // Later calls do nothing and keep the first error.
  CHECK(b.relu(x) == kNoTensor);
  CHECK(b.input("x2", DType::kF32, {1}) == kNoTensor);
  CHECK(b.split(x, 1, {1, 2}).empty());
  CHECK(b.layer_norm_with_stats(x, kNoTensor, kNoTensor).mean == kNoTensor);
  b.output(x, "out");
  CHECK(b.status().message() == first);
  CHECK(b.graph().nodes().empty());
  auto graph = b.finish();
  REQUIRE_FALSE(graph.is_ok());
  CHECK(graph.status().message() == first);
}

TEST_CASE("ModelBuilder rejects duplicate names and wrong value counts", "[builder]") {
  {
    ModelBuilder b;
    b.parameter_fill("layer.weight", {2}, 1.0f);
    CHECK(b.parameter_fill("layer.weight", {2}, 1.0f) == kNoTensor);
    CHECK_THAT(b.status().message(), Catch::Contains("'layer.weight'") && Catch::Contains("already used"));
  }
  {
    ModelBuilder b;
    CHECK(b.parameter("w", {2, 3}, {1, 2, 3}) == kNoTensor);
    CHECK_THAT(b.status().message(), Catch::Contains("'w'") && Catch::Contains("[2, 3]") && Catch::Contains("3 values"));
  }
  {
    ModelBuilder b;
    CHECK(b.input("x", DType::kF32, {2, -1}) == kNoTensor);
    CHECK_THAT(b.status().message(), Catch::Contains("'x'"));
  }
}

TEST_CASE("parameter initializers: bounds, determinism, kinds", "[builder]") {
  ModelBuilder b;
  const TensorId a = b.parameter_kaiming_uniform("a", {64, 16, 3, 3}, 7);  // fan_in 144 -> bound 1/12
  const TensorId same = b.parameter_kaiming_uniform("same", {64, 16, 3, 3}, 7);
  const TensorId other = b.parameter_kaiming_uniform("other", {64, 16, 3, 3}, 8);
  const TensorId u = b.parameter_uniform("u", {1000}, 0.5, 1);
  const TensorId s = b.state("bn.running_var", {3}, {1, 1, 1});
  const TensorId c = b.constant_i64("idx", {2}, {4, 5});
  REQUIRE(b.ok());
  const Graph& g = b.graph();
  const auto va = values_of(g, a), vu = values_of(g, u);
  double max_abs = 0.0, mean = 0.0;
  for (float v : va) max_abs = std::max(max_abs, std::fabs(static_cast<double>(v)));
  CHECK(max_abs <= 1.0 / 12.0);
  CHECK(max_abs > 0.9 / 12.0);  // the values fill the range
  CHECK(va == values_of(g, same));
  CHECK(va != values_of(g, other));
  for (float v : vu) {
    CHECK(std::fabs(v) <= 0.5f);
    mean += v;
  }
  CHECK(std::fabs(mean / 1000.0) < 0.05);
  CHECK(g.tensor(a).kind == TensorKind::kParameter);
  CHECK(g.tensor(s).kind == TensorKind::kState);
  CHECK(g.tensor(c).kind == TensorKind::kConstant);
  CHECK(g.tensor(c).dtype == DType::kI64);
}

TEST_CASE("ModelBuilder emits the documented op names and attributes", "[builder]") {
  ModelBuilder b;
  const TensorId x = b.input("x", DType::kF32, {2, 3, 4});
  const TensorId w = b.input("w", DType::kF32, {5, 4});
  b.matmul(x, w, false, true);
  b.reduce_mean(x, {-1}, false);
  b.log_softmax(x, 1);
  b.rms_norm(x, kNoTensor);
  b.clip(x, 0.0, std::nullopt);
  REQUIRE(b.ok());
  const auto& nodes = b.graph().nodes();
  REQUIRE(nodes.size() == 5);
  CHECK(nodes[0].op == "MatMul");
  CHECK(nodes[0].attrs.get_int("transpose_b", 0) == 1);
  CHECK(b.shape(nodes[0].outputs[0]) == Shape{2, 3, 5});
  CHECK(nodes[1].op == "ReduceMean");
  CHECK(nodes[1].attrs.get_int("keepdims", 1) == 0);
  CHECK(b.shape(nodes[1].outputs[0]) == Shape{2, 3});
  CHECK(nodes[2].op == "LogSoftmax");
  CHECK(nodes[2].attrs.get_int("axis", -1) == 1);
  CHECK(nodes[3].op == "RMSNorm");
  CHECK(nodes[3].outputs.size() == 2);
  CHECK(nodes[4].op == "Clip");
  CHECK(nodes[4].attrs.has("min"));
  CHECK_FALSE(nodes[4].attrs.has("max"));
}
