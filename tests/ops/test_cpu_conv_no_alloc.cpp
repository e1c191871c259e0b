// The cpu convolutions allocate nothing while a blob runs — not through operator new and not
// through malloc, which is how XNNPACK and OpenBLAS allocate. This binary replaces glibc's malloc
// family (the libraries' calls resolve to it) and counts calls around infer and train steps of a
// CNN whose frozen convolutions run through XNNPACK. The first infer is counted too: it is where an
// operator set up on a scratch address that a later prepare freed is set up again (same sizes,
// so XNNPACK must not reallocate its indirection buffer).
#include <catch2/catch.hpp>

#include <functional>
#include <vector>

#include "compiler/small_cnn.hpp"
#include "kernels/cpu/conv_winograd.hpp"
#include "support/counting_malloc.hpp"

using namespace pock;

namespace {
// Runs `body` on the blob opened on cpu with `threads`, its inputs fed with one batch.
void with_engine(const std::vector<uint8_t>& blob, int threads, const std::function<void(Engine&)>& body) {
  Engine::Options options;
  options.backend = "cpu";
  options.num_threads = threads;
  auto opened = Engine::open_buffer(blob.data(), blob.size(), options);
  INFO(opened.status().to_string());
  REQUIRE(opened.is_ok());
  Engine engine = std::move(opened.value());
  const test::CnnBatch batch = test::cnn_batch(0);
  REQUIRE(engine.set_input("image", batch.image).is_ok());
  if (engine.can_train()) REQUIRE(engine.set_input("label", batch.label).is_ok());
  body(engine);
}

#ifdef POCK_COUNT_MALLOC
// Three train steps, each followed by an infer, after one uncounted step: no malloc among them.
void check_steps_allocate_nothing(Engine& engine) {
  REQUIRE(engine.train_step().is_ok());  // the first step may warm up lazily (OpenBLAS for the head)
  Status status;
  const long n = pock::test::mallocs_during([&] {
    for (int s = 0; s < 3 && status.is_ok(); ++s) {
      auto loss = engine.train_step();
      status = loss.status();
      if (status.is_ok()) status = engine.infer();
    }
  });
  INFO(status.to_string());
  REQUIRE(status.is_ok());
  CHECK(n == 0);
}
#endif
}  // namespace

TEST_CASE("the malloc counter sees allocations (the test can fail)", "[cpu][alloc]") {
#ifndef POCK_COUNT_MALLOC
  WARN("skipped: malloc can only be counted on glibc without a sanitizer");
#else
  static void* volatile escaped = nullptr;  // volatile: the allocation cannot be elided
  const long n = pock::test::mallocs_during([] {
    escaped = std::malloc(100);
    std::free(escaped);
  });
  CHECK(n == 1);
#endif
}

TEST_CASE("frozen convolutions on cpu allocate nothing from the first infer on", "[cpu][alloc]") {
#ifndef POCK_COUNT_MALLOC
  WARN("skipped: malloc can only be counted on glibc without a sanitizer");
#else
  // Inference only: the convolutions are prepared in order and each needs more scratch than the
  // one before, so the first two operators are set up on an address a later prepare freed and
  // are set up again in the first run.
  const std::vector<uint8_t> blob = test::compile_or_fail(test::build_small_cnn(), nullptr, CompileOptions{});
  for (int threads : {1, 0}) {  // the caller's thread only, and the shared pool
    INFO("threads " << threads);
    with_engine(blob, threads, [](Engine& engine) {
      Status status;
      const long n = pock::test::mallocs_during([&] {
        for (int s = 0; s < 3 && status.is_ok(); ++s) status = engine.infer();
      });
      INFO(status.to_string());
      REQUIRE(status.is_ok());
      CHECK(n == 0);
    });
  }
#endif
}

TEST_CASE("frozen convolutions on cpu allocate nothing in train steps and infers", "[cpu][alloc]") {
#ifndef POCK_COUNT_MALLOC
  WARN("skipped: malloc can only be counted on glibc without a sanitizer");
#else
  // Train and infer bind their own instances of each frozen convolution, sharing one operator.
  const Recipe recipe = test::frozen_backbone_recipe();
  const std::vector<uint8_t> blob = test::compile_or_fail(test::build_small_cnn(), &recipe, CompileOptions{});
  for (int threads : {1, 0}) {
    INFO("threads " << threads);
    with_engine(blob, threads, check_steps_allocate_nothing);
  }
#endif
}

TEST_CASE("cpu Winograd convolutions allocate nothing in train steps and infers", "[cpu][alloc][winograd]") {
#ifndef POCK_COUNT_MALLOC
  WARN("skipped: malloc can only be counted on glibc without a sanitizer");
#else
  // Forced on every 3x3 stride-1 layer of the small CNN (too narrow for the speed rule): full BP
  // (trainable weights, transformed in scratch every run) and a frozen backbone (transformed once
  // at prepare), on the caller's thread and on the shared pool.
  using cpu::conv_winograd_testing::Choice;
  cpu::conv_winograd_testing::set_choice(Choice::kAlways);
  const int before = cpu::conv_winograd_testing::kernels_made();
  const Recipe full = test::full_bp_recipe(), frozen = test::frozen_backbone_recipe();
  for (const Recipe* recipe : {&full, &frozen}) {
    const std::vector<uint8_t> blob = test::compile_or_fail(test::build_small_cnn(), recipe, CompileOptions{});
    for (int threads : {1, 0}) {
      INFO((recipe == &full ? "full BP" : "frozen backbone") << ", threads " << threads);
      with_engine(blob, threads, check_steps_allocate_nothing);
    }
  }
  cpu::conv_winograd_testing::set_choice(Choice::kByRule);
  CHECK(cpu::conv_winograd_testing::kernels_made() > before);
#endif
}
