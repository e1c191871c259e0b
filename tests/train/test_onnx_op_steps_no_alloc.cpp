// Training steps through the ONNX ops outside the model zoo — Resize, the gather_scatter ops,
// GridSample, TopK, Det, RoiAlign (avg, max), ReverseSequence — allocate nothing after the first, on the engine's own choice
// of backends (the cpu kernels where it has them) and on ref alone; TfIdfVectorizer (integer
// tokens, no gradient) is checked in inference. One small model per op with a trainable input,
// an MSE loss and SGD; global operator new is replaced in this binary (support/counting_new.hpp).
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "pock/compiler/compiler.hpp"
#include "pock/pock.h"
#include "support/blob_inputs.hpp"
#include "support/counting_new.hpp"
#include "support/op_runner.hpp"

using namespace pock;
using namespace pock::test;

namespace {

struct OpModel {
  std::string op;
  Graph graph;
};

// One `op` node over `inputs` whose first output is the model's output "y".
OpModel one_op(const std::string& op, Graph g, const std::vector<TensorId>& inputs, const Attrs& attrs) {
  auto outs = g.add_node(op, inputs, attrs, "node");
  INFO(outs.status().to_string());
  REQUIRE(outs.is_ok());
  REQUIRE(g.mark_output(outs.value()[0], "y").is_ok());
  return {op, std::move(g)};
}

TensorId parameter(Graph& g, const std::string& name, const Shape& shape, uint32_t seed) {
  return g.add_parameter_f32(name, shape, random_floats(static_cast<size_t>(numel(shape)), seed));
}

std::vector<OpModel> trainable_op_models() {
  std::vector<OpModel> models;
  {
    Graph g;
    const TensorId x = parameter(g, "x", {1, 2, 3, 4}, 1);
    models.push_back(one_op("Resize", std::move(g), {x},
                            {{"mode", std::string("linear")}, {"sizes", std::vector<int64_t>{1, 2, 6, 8}},
                             {"scales", std::vector<double>{1, 1, 2, 2}}}));
  }
  {
    Graph g;
    const TensorId x = parameter(g, "x", {3, 4}, 2), i = g.add_input("i", DType::kI64, {3, 4});
    models.push_back(one_op("GatherElements", std::move(g), {x, i}, {{"axis", int64_t{1}}}));
  }
  {
    Graph g;
    const TensorId data = parameter(g, "data", {3, 4}, 3), updates = parameter(g, "updates", {2, 4}, 4);
    const TensorId i = g.add_input("i", DType::kI64, {2, 4});
    models.push_back(one_op("ScatterElements", std::move(g), {data, i, updates},
                            {{"axis", int64_t{0}}, {"reduction", std::string("add")}}));
  }
  {
    Graph g;
    const TensorId x = parameter(g, "x", {1, 2, 4, 4}, 5), grid = parameter(g, "grid", {1, 3, 3, 2}, 6);
    models.push_back(one_op("GridSample", std::move(g), {x, grid}, {}));
  }
  {
    Graph g;
    const TensorId x = parameter(g, "x", {3, 6}, 7);
    models.push_back(one_op("TopK", std::move(g), {x}, {{"k", int64_t{2}}, {"axis", int64_t{-1}}}));
  }
  {
    Graph g;
    const TensorId x = parameter(g, "x", {2, 3, 3}, 8);
    models.push_back(one_op("Det", std::move(g), {x}, {}));
  }
  {
    Graph g;
    const TensorId x = parameter(g, "x", {1, 2, 6, 6}, 9);
    const TensorId rois = g.add_input("rois", DType::kF32, {2, 4}), batch = g.add_input("batch", DType::kI64, {2});
    models.push_back(one_op("RoiAlign", std::move(g), {x, rois, batch},
                            {{"output_height", int64_t{2}}, {"output_width", int64_t{2}}, {"sampling_ratio", int64_t{2}}}));
  }
  {
    Graph g;
    const TensorId x = parameter(g, "x", {1, 2, 6, 6}, 10);
    const TensorId rois = g.add_input("rois", DType::kF32, {2, 4}), batch = g.add_input("batch", DType::kI64, {2});
    models.push_back(one_op("RoiAlign", std::move(g), {x, rois, batch},
                            {{"mode", std::string("max")}, {"output_height", int64_t{2}}, {"output_width", int64_t{2}}}));
  }
  {
    Graph g;
    const TensorId x = parameter(g, "x", {3, 4, 5}, 11), i = g.add_input("i", DType::kI64, {3, 2, 1});
    models.push_back(one_op("GatherND", std::move(g), {x, i}, {{"batch_dims", int64_t{1}}}));
  }
  {
    Graph g;
    const TensorId data = parameter(g, "data", {4, 5}, 12), updates = parameter(g, "updates", {3, 5}, 13);
    const TensorId i = g.add_input("i", DType::kI64, {3, 1});
    models.push_back(one_op("ScatterND", std::move(g), {data, i, updates}, {}));
  }
  {
    Graph g;
    const TensorId data = parameter(g, "data", {4, 5}, 15), updates = parameter(g, "updates", {3, 5}, 16);
    const TensorId i = g.add_input("i", DType::kI64, {3, 1});
    models.push_back(one_op("ScatterND", std::move(g), {data, i, updates}, {{"reduction", std::string("max")}}));
  }
  {
    Graph g;
    const TensorId x = parameter(g, "x", {5, 3, 4}, 14), lens = g.add_input("lens", DType::kI64, {3});
    models.push_back(one_op("ReverseSequence", std::move(g), {x, lens}, {}));
  }
  return models;
}

// Opens `blob` (inputs zero) on `backend` (nullptr: the engine's choice), runs `step` once to warm
// up, and returns the allocations of three more.
template <typename Step>
long steps_allocations(const std::vector<uint8_t>& blob, const char* backend, Step step) {
  pock_engine_options options{};
  options.struct_size = sizeof(options);
  options.num_threads = 1;
  options.rollback_on_failure = 1;
  options.backend = backend;
  pock_engine* engine = nullptr;
  REQUIRE(pock_engine_open_buffer(blob.data(), blob.size(), &options, &engine) == POCK_OK);
  REQUIRE(set_inputs_to_zero(engine, blob));
  pock_status status = step(engine);
  INFO(pock_engine_last_error(engine));
  REQUIRE(status == POCK_OK);
  const long n = allocations_during([&] {
    for (int s = 0; s < 3 && status == POCK_OK; ++s) status = step(engine);
  });
  CHECK(status == POCK_OK);
  pock_engine_close(engine);
  return n;
}

}  // namespace

TEST_CASE("training steps through Resize, gather_scatter, GridSample, TopK, Det, RoiAlign and ReverseSequence allocate nothing",
          "[train][alloc]") {
  Recipe recipe;
  recipe.loss.type = "mse";
  recipe.loss.logits = "y";
  recipe.optimizer.type = "sgd";
  recipe.optimizer.lr = 0.01;
  for (const OpModel& m : trainable_op_models()) {
    auto blob = compile(m.graph, &recipe);
    INFO(m.op << ": " << blob.status().to_string());
    REQUIRE(blob.is_ok());
    const auto train = [](pock_engine* e) {
      float loss = 0;
      return pock_engine_train_step(e, &loss);
    };
    for (const char* backend : {static_cast<const char*>(nullptr), "ref"}) {
      INFO(m.op << " on " << (backend ? backend : "the engine's choice"));
      CHECK(steps_allocations(blob.value(), backend, train) == 0);
    }
  }
}

TEST_CASE("TfIdfVectorizer inference allocates nothing", "[runtime][alloc]") {
  Graph g;
  const Attrs attrs{{"min_gram_length", int64_t{1}},
                    {"max_gram_length", int64_t{2}},
                    {"max_skip_count", int64_t{1}},
                    {"mode", std::string("TFIDF")},
                    {"pool_int64s", std::vector<int64_t>{2, 3, 5, 4, 5, 6, 7, 8, 6, 7}},
                    {"ngram_counts", std::vector<int64_t>{0, 4}},
                    {"ngram_indexes", std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6}},
                    {"weights", std::vector<double>{1, 2, 3, 4, 5, 6, 7}}};
  const TensorId tokens = g.add_input("tokens", DType::kI64, {2, 6});
  const OpModel m = one_op("TfIdfVectorizer", std::move(g), {tokens}, attrs);
  auto blob = compile(m.graph, nullptr);
  INFO(blob.status().to_string());
  REQUIRE(blob.is_ok());
  CHECK(steps_allocations(blob.value(), nullptr, [](pock_engine* e) { return pock_engine_infer(e); }) == 0);
}
