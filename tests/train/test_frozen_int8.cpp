// Recipe "frozen_weights": "int8": frozen Linear weights become int8 with a scale per row
// (LinearInt8), trainable ones stay f32; layers below a quantized one train through its
// LinearInt8InputGrad. The blob is smaller, and training follows the f32 run closely.
#include <catch2/catch.hpp>

#include <cmath>

#include "blob/reader.hpp"
#include "pock/compiler/builder.hpp"
#include "train/mlp_model.hpp"
#include "train/sparse_models.hpp"

using namespace pock;
using namespace pock::test;

namespace {

int count_ops(const std::vector<uint8_t>& blob, const std::string& op, const std::string& function) {
  BlobView view;
  REQUIRE(open_blob(blob.data(), blob.size(), VerifyOptions{}, &view).is_ok());
  auto spec = read_program_spec(view, false);
  REQUIRE(spec.is_ok());
  int n = 0;
  for (const FunctionSpec& f : spec->functions) {
    if (f.name != function) continue;
    for (uint32_t i : f.ops) n += spec->ops[i].op == op;
  }
  return n;
}

}  // namespace

TEST_CASE("frozen_weights int8: frozen Linear layers run as LinearInt8 and the layers below still train", "[train][int8]") {
  Recipe f32 = classifier_recipe();
  f32.trainable = {rule_match("fc1.*")};  // fc2 frozen: the gradient reaches fc1 through it
  Recipe int8 = f32;
  int8.frozen_weights = "int8";
  auto a = compile(build_mlp(), &f32);
  auto b = compile(build_mlp(), &int8);
  INFO(b.status().message());
  REQUIRE(a.is_ok());
  REQUIRE(b.is_ok());
  for (const char* fn : {"infer", "train", "eval"}) {
    INFO(fn);
    CHECK(count_ops(b.value(), "LinearInt8", fn) == 1);  // fc2; fc1 trains, so it stays f32
    CHECK(count_ops(b.value(), "Linear", fn) == 1);
  }
  CHECK(count_ops(b.value(), "LinearInt8InputGrad", "train") == 1);

  auto ea = Engine::open_buffer(a->data(), a->size());
  auto eb = Engine::open_buffer(b->data(), b->size());
  REQUIRE(ea.is_ok());
  REQUIRE(eb.is_ok());
  float first = 0, last = 0;
  for (int s = 0; s < 40; ++s) {
    REQUIRE(feed(*ea, make_batch(s)).is_ok());
    REQUIRE(feed(*eb, make_batch(s)).is_ok());
    auto la = ea->train_step();
    auto lb = eb->train_step();
    REQUIRE(la.is_ok());
    REQUIRE(lb.is_ok());
    if (s == 0) first = *lb;
    last = *lb;
    // The int8 layer rounds x and the gradient to 8 bits: close to the f32 run, not equal.
    CHECK(std::fabs(*la - *lb) <= 0.05f * std::max(1.0f, *la));
  }
  CHECK(last < 0.5f * first);  // it learns
}

TEST_CASE("frozen_weights int8: the f32 weight leaves the blob for its int8 form", "[train][int8]") {
  // x [8, 256] -> head (trainable, 256 -> 256) -> Relu -> body (frozen, 256 -> 256) -> logits
  ModelBuilder mb;
  const TensorId x = mb.input("x", DType::kF32, {8, 256});
  TensorId h = mb.relu(mb.named("head").linear(x, mb.parameter_kaiming_uniform("head.weight", {256, 256}, 1)));
  mb.output(mb.named("body").linear(h, mb.parameter_kaiming_uniform("body.weight", {256, 256}, 2)), "logits");
  const Graph g = std::move(mb.finish().value());
  Recipe f32 = classifier_recipe();
  f32.trainable = {rule_match("head.*")};
  Recipe int8 = f32;
  int8.frozen_weights = "int8";
  CompileReport ra, rb;
  auto a = compile(g, &f32, {}, &ra);
  auto b = compile(g, &int8, {}, &rb);
  REQUIRE(a.is_ok());
  REQUIRE(b.is_ok());
  // body.weight: 256 KiB of f32 -> 64 KiB int8 + its 64 KiB transpose (the input gradient) + scales.
  INFO("weights " << ra.weights_bytes << " -> " << rb.weights_bytes);
  CHECK(ra.weights_bytes - rb.weights_bytes >= 120 * 1024);
  CHECK(a->size() - b->size() >= 120 * 1024);
}

TEST_CASE("frozen_weights takes f32 or int8 only", "[train][int8][recipe]") {
  auto r = parse_recipe(R"({"frozen_weights": "int4"})");
  REQUIRE_FALSE(r.is_ok());
  CHECK_THAT(r.status().message(), Catch::Contains("'frozen_weights'"));
  auto ok = parse_recipe(R"({"frozen_weights": "int8"})");
  REQUIRE(ok.is_ok());
  CHECK(ok->frozen_weights == "int8");
}
