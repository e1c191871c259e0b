// Resuming from a checkpoint continues training bit for bit: 10 steps, save, load into a fresh
// engine, 10 more steps == 20 uninterrupted steps.
#include <sys/resource.h>

#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

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

TEST_CASE("a checkpoint that cannot be written completely leaves the previous one intact", "[train][checkpoint]") {
  // A full disk, simulated with a file-size limit: the write fails part-way (EFBIG; SIGXFSZ is
  // ignored so the process lives). The error names the problem, the old checkpoint still loads,
  // and no temporary file is left behind.
  auto trainer = compile_trainer(build_mlp(), classifier_recipe());
  REQUIRE(trainer.is_ok());
  Engine& e = trainer->engine;
  train(e, 0, 3);
  const std::string path = "test_resume_full_disk.ckpt";
  REQUIRE(e.save_checkpoint(path).is_ok());
  auto read_all = [&] {
    std::ifstream in(path, std::ios::binary);
    return std::vector<char>(std::istreambuf_iterator<char>(in), {});
  };
  const std::vector<char> good = read_all();
  REQUIRE(good.size() > 200);
  const auto at_step_3 = parameters(e);

  train(e, 3, 5);
  rlimit old_limit{};
  REQUIRE(getrlimit(RLIMIT_FSIZE, &old_limit) == 0);
  const auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
  rlimit small = old_limit;
  small.rlim_cur = 100;  // the header fits, the first tensor does not
  REQUIRE(setrlimit(RLIMIT_FSIZE, &small) == 0);
  const Status failed = e.save_checkpoint(path);
  setrlimit(RLIMIT_FSIZE, &old_limit);
  std::signal(SIGXFSZ, old_handler);

  REQUIRE_FALSE(failed.is_ok());
  CHECK(failed.message().find("cannot write") != std::string::npos);
  CHECK(read_all() == good);
  for (const auto& entry : std::filesystem::directory_iterator(".")) {
    CHECK(entry.path().filename().string().rfind(path + ".tmp", 0) != 0);
  }
  auto fresh = compile_trainer(build_mlp(), classifier_recipe());
  REQUIRE(fresh.is_ok());
  REQUIRE(fresh->engine.load_checkpoint(path).is_ok());
  CHECK(fresh->engine.step() == 3);
  const auto loaded = parameters(fresh->engine);
  for (size_t i = 0; i < loaded.size(); ++i) CHECK(bit_identical(loaded[i], at_step_3[i]));
  std::remove(path.c_str());
}
