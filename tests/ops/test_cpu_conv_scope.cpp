// The cpu convolutions' memory follows the plan (issue #7): every op of an engine shares one
// scratch region sized to the largest need, and op instances that convolve the same frozen weight
// (the train and infer functions each bind one) share one XNNPACK operator, i.e. one packed copy
// of the weight. Checked at three levels: the KernelScope itself; Conv2d ops prepared on one scope
// and run against the reference kernel, including after the scratch region moved; and whole
// engines training a CNN with a frozen backbone on cpu against ref.
#include <catch2/catch.hpp>

#include <memory>
#include <string>
#include <vector>

#include "compiler/small_cnn.hpp"
#include "runtime/engine_core.hpp"
#include "runtime/kernel_scope.hpp"
#include "runtime/table_backend.hpp"
#include "support/backend_compare.hpp"
#include "support/hand_bound_op.hpp"

using namespace pock;

namespace {

// One Conv2d bound by hand: host buffers, descriptors and attributes that stay where the op
// descriptor points for as long as the case lives.
class ConvOp {
 public:
  // x [n, c, side, side] from `seed`, a constant weight [o, c / groups, k, k] read from `weight`
  // (shared between cases when the caller passes the same vector), "same" padding, no bias.
  ConvOp(int64_t n, int64_t c, int64_t side, int64_t o, int64_t k, int64_t groups, const std::vector<float>* weight,
         uint32_t seed)
      : x_(test::uniform({n, c, side, side}, seed)), y_(static_cast<size_t>(n * o * side * side)) {
    pads_ = {k / 2, k / 2, k / 2, k / 2};
    inputs_[0] = test::f32_desc({n, c, side, side}, x_.data());
    inputs_[1] = test::f32_desc({o, c / groups, k, k}, weight->data(), POCK_TENSOR_CONSTANT);
    inputs_[2] = pock_tensor_desc{};
    inputs_[2].rank = -1;  // no bias
    output_ = test::f32_desc({n, o, side, side}, y_.data());
    attrs_[0] = pock_attr{};
    attrs_[0].name = "pads";
    attrs_[0].kind = POCK_ATTR_INTS;
    attrs_[0].ints = pads_.data();
    attrs_[0].count = 4;
    attrs_[1] = test::int_attr("groups", groups);
    desc_ = test::op_desc("Conv2d", inputs_, 3, &output_, attrs_, 2);
  }
  ConvOp(const ConvOp&) = delete;
  ConvOp& operator=(const ConvOp&) = delete;

  const pock_op_desc& desc() const { return desc_; }
  const std::vector<float>& y() const { return y_; }

  // y computed by the reference kernel, the oracle.
  std::vector<float> reference() {
    const KernelDef* def = ref_kernels().find("Conv2d", DType::kF32);
    REQUIRE(def != nullptr);
    void* state = nullptr;
    if (def->prepare) REQUIRE(def->prepare(desc_, &state).is_ok());
    const Status s = def->run(KernelCall{&desc_, state});
    if (def->release) def->release(state);
    REQUIRE(s.is_ok());
    return y_;
  }

 private:
  std::vector<float> x_, y_;
  std::vector<int64_t> pads_;
  pock_tensor_desc inputs_[3]{}, output_{};
  pock_attr attrs_[2]{};
  pock_op_desc desc_{};
};

// A Conv2d prepared by the cpu kernel on `scope`, released when it goes away.
class PreparedConv {
 public:
  PreparedConv(const pock_op_desc& desc, KernelScope& scope) : def_(cpu_kernels().find("Conv2d", DType::kF32)) {
    REQUIRE(def_ != nullptr);
    REQUIRE(def_->prepare_scoped != nullptr);
    const Status s = def_->prepare_scoped(desc, scope, &state_);
    INFO(s.to_string());
    REQUIRE(s.is_ok());
  }
  ~PreparedConv() {
    if (def_->release) def_->release(state_);
  }
  PreparedConv(const PreparedConv&) = delete;
  PreparedConv& operator=(const PreparedConv&) = delete;

  void run(const pock_op_desc& desc) {
    const Status s = def_->run(KernelCall{&desc, state_});
    INFO(s.to_string());
    REQUIRE(s.is_ok());
  }

 private:
  const KernelDef* def_;
  void* state_ = nullptr;
};

bool xnnpack_in_build() {
#ifdef POCK_HAVE_XNNPACK
  return true;
#else
  return false;
#endif
}

}  // namespace

TEST_CASE("KernelScope: the scratch region is as large as the largest reservation, not the sum", "[cpu][memory]") {
  KernelScope scope;
  CHECK(scope.scratch_size() == 0);
  REQUIRE(scope.reserve_scratch(1000, "a").is_ok());
  REQUIRE(scope.reserve_scratch(300, "b").is_ok());
  CHECK(scope.scratch_size() == 1000);
  REQUIRE(scope.reserve_scratch(5000, "c").is_ok());
  CHECK(scope.scratch_size() == 5000);
  CHECK(scope.scratch() != nullptr);
}

TEST_CASE("KernelScope: a shared object is found while an op holds it, and dies with the last one", "[cpu][memory]") {
  KernelScope scope;
  CHECK(scope.find_shared("k") == nullptr);
  auto object = std::make_shared<int>(7);
  REQUIRE(scope.put_shared("k", object));
  CHECK(scope.find_shared("k") == object);
  CHECK(scope.find_shared("other") == nullptr);
  CHECK(scope.live_shared() == 1);
  object.reset();
  // The scope alone does not keep it: a key naming a freed buffer's address finds nothing.
  CHECK(scope.find_shared("k") == nullptr);
  CHECK(scope.live_shared() == 0);
}

TEST_CASE("cpu Conv2d: ops with the same frozen weight share one operator, and every op one scratch region",
          "[cpu][memory]") {
  if (!xnnpack_in_build()) {
    WARN("skipped: this build has no XNNPACK, the only cpu convolution that packs a frozen weight");
    return;
  }
  const std::vector<float> w_a = test::uniform({8, 4, 3, 3}, 11);
  const std::vector<float> w_b = test::uniform({8, 4, 3, 3}, 12);
  // The same layer as the train and the infer function bind it (two instances, one weight), and
  // another layer of the same shape.
  ConvOp train_a(2, 4, 6, 8, 3, 1, &w_a, 1), infer_a(2, 4, 6, 8, 3, 1, &w_a, 2), other(2, 4, 6, 8, 3, 1, &w_b, 3);
  KernelScope scope;
  {
    PreparedConv p1(train_a.desc(), scope);
    CHECK(scope.live_shared() == 1);
    PreparedConv p2(infer_a.desc(), scope);
    CHECK(scope.live_shared() == 1);  // shared, not packed again
    PreparedConv p3(other.desc(), scope);
    CHECK(scope.live_shared() == 2);
    // NHWC input then output of one op (2*4*36 and 2*8*36 floats, the input rounded up to 64
    // bytes), not three ops' worth.
    const size_t one_op = (2 * 4 * 36 * sizeof(float) + 63) / 64 * 64 + 2 * 8 * 36 * sizeof(float);
    CHECK(scope.scratch_size() >= one_op);
    CHECK(scope.scratch_size() < 2 * one_op);
  }
  CHECK(scope.live_shared() == 0);  // released with the ops
}

TEST_CASE("cpu Conv2d: shared operators give ref's result, also after a later prepare moved the scratch region",
          "[cpu][memory]") {
  if (!xnnpack_in_build()) {
    WARN("skipped: this build has no XNNPACK, the only cpu convolution that binds scratch at prepare");
    return;
  }
  const std::vector<float> w_small = test::uniform({8, 4, 3, 3}, 21);
  const std::vector<float> w_depthwise = test::uniform({64, 1, 7, 7}, 22);
  ConvOp small_1(2, 4, 5, 8, 3, 1, &w_small, 1), small_2(2, 4, 5, 8, 3, 1, &w_small, 2);
  // Large enough that its scratch comes from another allocation than the small one's; a 7x7
  // window on rows under 32 columns, so that XNNPACK (not the direct depthwise loops, which need
  // no scratch) runs it.
  ConvOp large(4, 64, 28, 64, 7, 64, &w_depthwise, 3);
  const std::vector<float> want_1 = small_1.reference(), want_2 = small_2.reference(), want_large = large.reference();

  KernelScope scope;
  PreparedConv p1(small_1.desc(), scope);
  PreparedConv p2(small_2.desc(), scope);
  const uint8_t* bound_at = scope.scratch();
  PreparedConv p_large(large.desc(), scope);
  CHECK(scope.scratch() != bound_at);  // the small ops' operator was set up on freed memory
  for (int round = 0; round < 2; ++round) {
    p2.run(small_2.desc());
    p1.run(small_1.desc());
    p_large.run(large.desc());
    const double tolerance = 1e-4;
    CHECK(test::mismatch(small_1.y(), want_1, tolerance).empty());
    CHECK(test::mismatch(small_2.y(), want_2, tolerance).empty());
    CHECK(test::mismatch(large.y(), want_large, tolerance).empty());
  }
}

TEST_CASE("a CNN with a frozen backbone trains and infers on cpu as on ref", "[cpu][memory]") {
  // Its three convolutions are frozen: on cpu the train and the infer function share their
  // operators and all of them one scratch region.
  const Graph g = test::build_small_cnn();
  const Recipe recipe = test::frozen_backbone_recipe();
  const std::vector<uint8_t> blob = test::compile_or_fail(g, &recipe, CompileOptions{});
  {
    // The case is about the cpu kernels: every convolution of both functions must be bound there.
    EngineOptions options;
    options.backend = "cpu";
    auto core = EngineCore::open_buffer(blob.data(), blob.size(), options);
    REQUIRE(core.is_ok());
    const auto* ops = (*core)->blob().program->ops();
    const std::vector<std::string> backends = (*core)->op_backends();
    int convs = 0;
    for (flatbuffers::uoffset_t i = 0; i < ops->size(); ++i) {
      if (ops->Get(i)->op()->str() != "Conv2d") continue;
      ++convs;
      CHECK(backends[i] == "cpu");
    }
    CHECK(convs >= 6);  // three layers, in train and in infer
  }
  Engine cpu = test::open_engine(blob, "cpu");
  Engine ref = test::open_engine(blob, "ref");
  for (uint32_t step = 0; step < 3; ++step) {
    const test::CnnBatch batch = test::cnn_batch(step);
    const float loss_cpu = test::train_once(cpu, batch), loss_ref = test::train_once(ref, batch);
    CHECK(std::fabs(loss_cpu - loss_ref) <= 1e-4 * (std::fabs(loss_ref) + 1));
    const std::vector<float> logits_cpu = test::infer_logits(cpu, batch), logits_ref = test::infer_logits(ref, batch);
    CHECK(test::max_relative_difference(logits_cpu, logits_ref) <= 1e-4);
  }
  CHECK(test::max_relative_difference(test::parameter(cpu, "fc1.weight"), test::parameter(ref, "fc1.weight")) <= 1e-4);
}

TEST_CASE("an engine reports its kernels' scratch: im2col columns on cpu, nothing on ref", "[cpu][memory]") {
  // pockc inspect's "kernel workspace here". A 3x3 convolution whose weight is a graph input runs
  // through im2col on cpu (when OpenBLAS is in the build): its columns live in the scratch.
  Graph g;
  const TensorId x = g.add_input("x", DType::kF32, {2, 4, 9, 9});
  const TensorId w = g.add_input("w", DType::kF32, {6, 4, 3, 3});
  Attrs attrs;
  attrs.set("pads", std::vector<int64_t>{1, 1, 1, 1});
  auto y = g.add_node("Conv2d", {x, w, kNoTensor}, attrs, "conv");
  REQUIRE(y.is_ok());
  REQUIRE(g.mark_output(y.value()[0], "y").is_ok());
  const std::vector<uint8_t> blob = test::compile_or_fail(g, nullptr, CompileOptions{});
  auto open = [&](const char* backend) {
    EngineOptions options;
    options.backend = backend;
    auto core = EngineCore::open_buffer(blob.data(), blob.size(), options);
    REQUIRE(core.is_ok());
    return std::move(core.value());
  };
  auto cpu = open("cpu");
  if (cpu->op_backends()[0] != "cpu") {
    WARN("skipped the cpu half: Conv2d binds to " << cpu->op_backends()[0] << " in this build (no OpenBLAS)");
  } else {
    const size_t columns = sizeof(float) * 4 * 3 * 3 * 9 * 9;  // one image's [C*kh*kw, H*W] columns
    CHECK(cpu->workspace_bytes() >= columns);
  }
  CHECK(open("ref")->workspace_bytes() == 0);
}
