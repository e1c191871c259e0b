// ONNX models that train through GatherND and ScatterND: imported, compiled with an MSE recipe,
// one SGD step on the engine's own backends (the cpu kernels) and on ref alone. With the target 0
// the loss is mean(y^2), so dL/dy = 2 y / numel(y), and the step each weight takes follows from
// where the op moved it, worked out in the test from the weights' initial values.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "frontend/onnx_test_model.hpp"
#include "frontend/onnx_test_run.hpp"
#include "pock/compiler/compiler.hpp"
#include "pock/engine.hpp"

using namespace pock;
using namespace pock::testing;

namespace {

constexpr double kLr = 0.5;

std::vector<float> ramp(size_t n, float start) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = start + 0.25f * static_cast<float>(i);
  return v;
}

// `m` imported and compiled with loss mse(y, label) and plain SGD; one train step with label 0 on
// `backend` ("" = the engine's choice); returns the named weights after it.
std::vector<std::vector<float>> weights_after_step(const OnnxModel& m, const Shape& y, const std::string& backend,
                                                   const std::vector<std::pair<std::string, size_t>>& weights) {
  Graph g = import_ok(m);
  Recipe recipe;
  recipe.loss.type = "mse";
  recipe.loss.logits = "y";
  recipe.optimizer.type = "sgd";
  recipe.optimizer.lr = kLr;
  auto blob = compile(g, &recipe);
  INFO(blob.status().to_string());
  REQUIRE(blob.is_ok());
  Engine::Options options;
  options.backend = backend;
  auto engine = Engine::open_buffer(blob->data(), blob->size(), options);
  REQUIRE(engine.is_ok());
  REQUIRE(engine->set_input("label", std::vector<float>(static_cast<size_t>(numel(y)), 0.0f)).is_ok());
  auto loss = engine->train_step();
  INFO(loss.status().to_string());
  REQUIRE(loss.is_ok());
  std::vector<std::vector<float>> out;
  for (const auto& [name, size] : weights) {
    std::vector<float> w(size);
    REQUIRE(engine->get_parameter(name, w.data(), size * sizeof(float)).is_ok());
    out.push_back(std::move(w));
  }
  return out;
}

void check_close(const std::vector<float>& got, const std::vector<double>& want) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i);
    CHECK(got[i] == Approx(want[i]).margin(1e-6));
  }
}

}  // namespace

TEST_CASE("ONNX GatherND trains its table: repeated rows add their gradients", "[onnx][train]") {
  OnnxModel m;
  const std::vector<float> table = ramp(12, -1.0f);  // [4, 3]
  const std::vector<int64_t> rows = {0, 2, 2, 3, 0};
  m.floats("table", {4, 3}, table).ints("rows", {5, 1}, rows);
  m.node("GatherND", {"table", "rows"}, {"y"}, "gather");
  m.output("y");
  // Row r is read count(r) times: each read adds 2 T[r] / 15 to its gradient.
  std::vector<double> want(table.begin(), table.end());
  for (int64_t r : rows) {
    for (size_t j = 0; j < 3; ++j) want[static_cast<size_t>(r) * 3 + j] -= kLr * 2.0 * table[static_cast<size_t>(r) * 3 + j] / 15.0;
  }
  for (const char* backend : {"", "ref"}) {
    INFO("backend '" << backend << "'");
    check_close(weights_after_step(m, {5, 3}, backend, {{"table", 12}})[0], want);
  }
}

TEST_CASE("ONNX ScatterND trains its data and its updates", "[onnx][train]") {
  OnnxModel m;
  const std::vector<float> data = ramp(12, -1.5f), updates = ramp(6, 0.5f);  // [4, 3], [2, 3]
  m.floats("data", {4, 3}, data).floats("updates", {2, 3}, updates).ints("rows", {2, 1}, {3, 1});
  m.node("ScatterND", {"data", "rows", "updates"}, {"y"}, "scatter");
  m.output("y");
  // Rows 3 and 1 of y are the updates: data's rows 1 and 3 get no gradient, the rest of data and
  // the updates get 2 y / 12.
  std::vector<double> want_data(data.begin(), data.end()), want_updates(updates.begin(), updates.end());
  for (size_t i = 0; i < 12; ++i) {
    if (i / 3 == 0 || i / 3 == 2) want_data[i] -= kLr * 2.0 * data[i] / 12.0;
  }
  for (size_t i = 0; i < 6; ++i) want_updates[i] -= kLr * 2.0 * updates[i] / 12.0;
  for (const char* backend : {"", "ref"}) {
    INFO("backend '" << backend << "'");
    const auto w = weights_after_step(m, {4, 3}, backend, {{"data", 12}, {"updates", 6}});
    check_close(w[0], want_data);
    check_close(w[1], want_updates);
  }
}
