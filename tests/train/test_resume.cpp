// Resuming from a checkpoint continues training bit for bit: 10 steps, save, load into a fresh
// engine, 10 more steps == 20 uninterrupted steps.
#include <cstdio>
#include <cstring>

#include <catch2/catch.hpp>

#include "train/mlp_model.hpp"

using namespace pock;
using namespace pock::test;

namespace {

std::vector<std::vector<float>> parameters(Engine& e) {
  std::vector<std::vector<float>> out;
  for (const char* name : {"fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"}) {
    auto info = e.info(name);
    REQUIRE(info.is_ok());
    std::vector<float> v(info->nbytes / sizeof(float));
    REQUIRE(e.get_parameter(name, v.data(), info->nbytes).is_ok());
    out.push_back(std::move(v));
  }
  return out;
}

std::vector<float> train(Engine& e, int first, int last) {
  std::vector<float> losses;
  for (int s = first; s < last; ++s) {
    REQUIRE(feed(e, make_batch(s)).is_ok());
    auto loss = e.train_step();
    REQUIRE(loss.is_ok());
    losses.push_back(loss.value());
  }
  return losses;
}

bool bit_identical(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

}  // namespace

TEST_CASE("train 10, checkpoint, resume in a fresh engine, train 10 == train 20", "[train][checkpoint]") {
  // Everything with state: Adam moments, dropout masks keyed by the step, accumulation, clipping.
  Recipe r = classifier_recipe();
  r.grad_accumulation = 3;  // 10 is not a multiple: the checkpoint holds a half-full accumulator
  r.clip_grad_norm = 0.5;
  r.schedule.type = "cosine";
  r.schedule.warmup_steps = 2;
  r.schedule.total_steps = 7;
  MlpOptions o;
  o.dropout = 0.2;
  const Graph model = build_mlp(o);

  auto straight = compile_trainer(model, r);
  REQUIRE(straight.is_ok());
  const std::vector<float> first_half = train(straight->engine, 0, 10);
  const std::vector<float> second_half = train(straight->engine, 10, 20);

  const std::string path = "test_resume.ckpt";
  {
    auto before = compile_trainer(model, r);
    REQUIRE(before.is_ok());
    CHECK(bit_identical(train(before->engine, 0, 10), first_half));
    REQUIRE(before->engine.save_checkpoint(path).is_ok());
  }
  auto resumed = compile_trainer(model, r);
  REQUIRE(resumed.is_ok());
  REQUIRE(resumed->engine.load_checkpoint(path).is_ok());
  CHECK(resumed->engine.step() == 10);
  CHECK(bit_identical(train(resumed->engine, 10, 20), second_half));
  const auto want = parameters(straight->engine);
  const auto got = parameters(resumed->engine);
  for (size_t i = 0; i < want.size(); ++i) CHECK(bit_identical(got[i], want[i]));
  std::remove(path.c_str());
}
