// After the first step, a training step allocates nothing: global operator new is replaced in
// this binary and counted around pock_engine_train_step (the C API an app calls).
#include <atomic>
#include <cstdlib>
#include <new>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "pock/pock.h"
#include "train/mlp_model.hpp"

namespace {
std::atomic<bool> g_counting{false};
std::atomic<long> g_allocations{0};

void* counted_alloc(std::size_t size, std::size_t align) {
  if (g_counting.load(std::memory_order_relaxed)) g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (size == 0) size = 1;
  void* p = align > alignof(std::max_align_t) ? std::aligned_alloc(align, (size + align - 1) / align * align) : std::malloc(size);
  return p;
}
}  // namespace

void* operator new(std::size_t size) {
  if (void* p = counted_alloc(size, 0)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t size) {
  if (void* p = counted_alloc(size, 0)) return p;
  throw std::bad_alloc();
}
void* operator new(std::size_t size, const std::nothrow_t&) noexcept { return counted_alloc(size, 0); }
void* operator new[](std::size_t size, const std::nothrow_t&) noexcept { return counted_alloc(size, 0); }
void* operator new(std::size_t size, std::align_val_t a) {
  if (void* p = counted_alloc(size, static_cast<std::size_t>(a))) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t size, std::align_val_t a) {
  if (void* p = counted_alloc(size, static_cast<std::size_t>(a))) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }

using namespace pock;
using namespace pock::test;

TEST_CASE("train_step allocates nothing after the first step", "[train][alloc]") {
  // Every training feature that owns per-step work: dropout, Adam, accumulation, clipping, schedule.
  Recipe r = classifier_recipe();
  r.grad_accumulation = 2;
  r.clip_grad_norm = 1.0;
  r.schedule.type = "linear_warmup";
  r.schedule.warmup_steps = 3;
  MlpOptions o;
  o.dropout = 0.1;
  auto trainer = compile_trainer(build_mlp(o), r);
  REQUIRE(trainer.is_ok());
  pock_engine* e = trainer->engine.handle();
  const Batch batch = make_batch(0);
  REQUIRE(feed(trainer->engine, batch).is_ok());
  float loss = 0;
  REQUIRE(pock_engine_train_step(e, &loss) == POCK_OK);  // the first step may warm up lazily

  g_allocations = 0;
  g_counting = true;
  pock_status status = POCK_OK;
  for (int s = 0; s < 6 && status == POCK_OK; ++s) status = pock_engine_train_step(e, &loss);
  g_counting = false;
  REQUIRE(status == POCK_OK);
  CHECK(g_allocations.load() == 0);
}

TEST_CASE("an app's loop - inputs, step, reads by long names - allocates nothing", "[train][alloc]") {
  // Names longer than std::string's small buffer: a lookup that built a std::string would allocate.
  MlpOptions o;
  o.prefix = "encoder.layers.11.personalization_head.";
  auto trainer = compile_trainer(build_mlp(o), classifier_recipe());
  REQUIRE(trainer.is_ok());
  pock_engine* e = trainer->engine.handle();
  const Batch batch = make_batch(0);
  const std::string weight = o.prefix + "fc2.bias";
  std::vector<float> bias(kClasses);
  float loss = 0;
  auto app_step = [&] {
    pock_status s = pock_engine_set_input(e, "x", batch.x.data(), batch.x.size() * sizeof(float));
    if (s == POCK_OK) s = pock_engine_set_input(e, "label", batch.label.data(), batch.label.size() * sizeof(int64_t));
    if (s == POCK_OK) s = pock_engine_train_step(e, &loss);
    if (s == POCK_OK) s = pock_engine_get_parameter(e, weight.c_str(), bias.data(), bias.size() * sizeof(float));
    return s;
  };
  REQUIRE(app_step() == POCK_OK);

  g_allocations = 0;
  g_counting = true;
  pock_status status = POCK_OK;
  for (int s = 0; s < 4 && status == POCK_OK; ++s) status = app_step();
  g_counting = false;
  REQUIRE(status == POCK_OK);
  CHECK(g_allocations.load() == 0);
}

TEST_CASE("the allocation counter sees allocations (the test can fail)", "[train][alloc]") {
  g_allocations = 0;
  g_counting = true;
  auto* p = new std::vector<int>(100);
  g_counting = false;
  delete p;
  CHECK(g_allocations.load() >= 1);
}
