// The cpu bf16 GEMMs' memory and weight conversions (kernels/cpu/bf16_weight_copy.hpp,
// kernels/cpu/gemm_plan.hpp), with ref's kernels as the oracle:
//   - a forward Linear marked bf16_weight "keep" and a LinearInputGrad marked "kept" over the same
//     trainable weight: the input gradient reads the forward's bf16 copy (shown by changing the
//     weight between the two, which a step never does), and each forward converts the weight anew
//     (a weight changed between steps is never read stale);
//   - "kept" with no forward on the same backend instance converts the weight itself;
//   - a frozen weight's copy is made once and shared by every op over it, and counted;
//   - the bf16 operands of all ops share one scratch region, sized by the largest GEMM.
// The copies exist on the oneDNN way only (AVX512-BF16); elsewhere these cases check the results
// and say that they skipped the rest.
#include <catch2/catch.hpp>

#include <memory>
#include <string>
#include <vector>

#include "kernels/cpu/bf16_gemm.hpp"
#include "runtime/kernel_scope.hpp"
#include "runtime/table_backend.hpp"
#include "support/backend_compare.hpp"
#include "support/hand_bound_op.hpp"

using namespace pock;

namespace {

// One bf16 GEMM op (Linear without bias, LinearInputGrad) bound by hand over caller-owned inputs,
// so that two ops can read one weight buffer.
class Gemm {
 public:
  // op(a, w): Linear y [rows, n] = a [rows, k] wᵀ; LinearInputGrad dx [rows, k] = a [rows, n] w.
  Gemm(const char* op, int64_t rows, int64_t n, int64_t k, const std::vector<float>* a, const std::vector<float>* w,
       const char* bf16_weight, bool frozen_weight = false)
      : y_(static_cast<size_t>(rows * (std::string(op) == "Linear" ? n : k))), bf16_weight_(bf16_weight) {
    const bool linear = std::string(op) == "Linear";
    inputs_[0] = test::f32_desc(linear ? Shape{rows, k} : Shape{rows, n}, a->data());
    inputs_[1] = test::f32_desc({n, k}, w->data(), frozen_weight ? POCK_TENSOR_CONSTANT : 0u);
    output_ = test::f32_desc(linear ? Shape{rows, n} : Shape{rows, k}, y_.data());
    attrs_[0] = test::string_attr("compute", "bf16");
    attrs_[1] = test::string_attr("bf16_weight", bf16_weight_.c_str());
    desc_ = test::op_desc(op, inputs_, 2, &output_, attrs_, 2);
  }
  Gemm(const Gemm&) = delete;
  Gemm& operator=(const Gemm&) = delete;
  ~Gemm() {
    if (cpu_def_ && cpu_def_->release) cpu_def_->release(state_);
  }

  void prepare_cpu(KernelScope& scope) {
    cpu_def_ = cpu_kernels().find(desc_.op, DType::kF32);
    REQUIRE(cpu_def_ != nullptr);
    REQUIRE(cpu_def_->prepare_scoped != nullptr);
    const Status s = cpu_def_->prepare_scoped(desc_, scope, &state_);
    INFO(s.to_string());
    REQUIRE(s.is_ok());
  }

  std::vector<float> run_cpu() {
    const Status s = cpu_def_->run(KernelCall{&desc_, state_});
    INFO(s.to_string());
    REQUIRE(s.is_ok());
    return y_;
  }

  // The oracle, on the inputs as they are now.
  std::vector<float> run_ref() {
    const KernelDef* def = ref_kernels().find(desc_.op, DType::kF32);
    REQUIRE(def != nullptr);
    KernelScope scope;
    void* state = nullptr;
    if (def->prepare_scoped) REQUIRE(def->prepare_scoped(desc_, scope, &state).is_ok());
    else if (def->prepare) REQUIRE(def->prepare(desc_, &state).is_ok());
    const Status s = def->run(KernelCall{&desc_, state});
    if (def->release) def->release(state);
    REQUIRE(s.is_ok());
    return y_;
  }

 private:
  std::vector<float> y_;
  std::string bf16_weight_;
  pock_tensor_desc inputs_[2]{}, output_{};
  pock_attr attrs_[2]{};
  pock_op_desc desc_{};
  const KernelDef* cpu_def_ = nullptr;
  void* state_ = nullptr;
};

bool uses_copies() {
  if (cpu::bf16_isa() == cpu::Bf16Isa::kAvx512Bf16) return true;
  WARN("this CPU or build has no AVX512-BF16 oneDNN way: only the results were checked");
  return false;
}

// cpu and ref sum the same bf16 products in different orders.
void check_same(const std::vector<float>& got, const std::vector<float>& want) { CHECK(test::mismatch(got, want, 1e-5) == ""); }

}  // namespace

#ifdef POCK_HAVE_OPENBLAS

TEST_CASE("cpu bf16: the input gradient reads the weight copy its forward kept, rewritten by every forward",
          "[ops][cpu][bf16][memory]") {
  const int64_t rows = 24, n = 40, k = 56;
  const std::vector<float> x = test::uniform({rows, k}, 1), dy = test::uniform({rows, n}, 2);
  std::vector<float> w = test::uniform({n, k}, 3);
  KernelScope scope;
  Gemm forward("Linear", rows, n, k, &x, &w, "keep");
  Gemm input_grad("LinearInputGrad", rows, n, k, &dy, &w, "kept");
  forward.prepare_cpu(scope);
  input_grad.prepare_cpu(scope);
  const bool copies = uses_copies();
  if (copies) CHECK(scope.live_shared() == 1);  // one copy of w, for both

  for (int step = 0; step < 3; ++step) {
    INFO("step " << step);
    check_same(forward.run_cpu(), forward.run_ref());
    check_same(input_grad.run_cpu(), input_grad.run_ref());
    // What an update (or a rollback, or set_parameter) does between steps.
    for (float& v : w) v = v * 0.5f + 0.25f;
  }

  if (!copies) return;
  // The input gradient converts nothing: with w changed after the forward (never so in a step),
  // it still computes with the forward's copy.
  const std::vector<float> w_of_forward = w;
  forward.run_cpu();
  const std::vector<float> want = input_grad.run_ref();
  for (float& v : w) v = -v;
  check_same(input_grad.run_cpu(), want);
  w = w_of_forward;
}

TEST_CASE("cpu bf16: an input gradient marked kept with no forward on its backend converts the weight itself",
          "[ops][cpu][bf16][memory]") {
  const int64_t rows = 9, n = 33, k = 17;
  const std::vector<float> dy = test::uniform({rows, n}, 4);
  std::vector<float> w = test::uniform({n, k}, 5);
  KernelScope scope;
  Gemm input_grad("LinearInputGrad", rows, n, k, &dy, &w, "kept");
  input_grad.prepare_cpu(scope);
  check_same(input_grad.run_cpu(), input_grad.run_ref());
  for (float& v : w) v += 1.0f;
  check_same(input_grad.run_cpu(), input_grad.run_ref());
}

TEST_CASE("cpu bf16: a frozen weight is converted once, shared by every op over it, and counted",
          "[ops][cpu][bf16][memory]") {
  const int64_t rows = 12, n = 48, k = 20;
  const std::vector<float> x = test::uniform({rows, k}, 6), dy = test::uniform({rows, n}, 7);
  const std::vector<float> w = test::uniform({n, k}, 8);
  KernelScope scope;
  {
    // The train function's forward and input gradient, and the infer function's forward.
    Gemm train("Linear", rows, n, k, &x, &w, "keep", true), grad("LinearInputGrad", rows, n, k, &dy, &w, "kept", true);
    Gemm infer("Linear", rows, n, k, &x, &w, "own", true);
    train.prepare_cpu(scope);
    grad.prepare_cpu(scope);
    infer.prepare_cpu(scope);
    check_same(train.run_cpu(), train.run_ref());
    check_same(grad.run_cpu(), grad.run_ref());
    check_same(infer.run_cpu(), infer.run_ref());
    if (uses_copies()) {
      CHECK(scope.live_shared() == 1);
      CHECK(scope.shared_bytes() == static_cast<size_t>(n * k) * 2);
    }
  }
  CHECK(scope.live_shared() == 0);  // released with the ops
  CHECK(scope.shared_bytes() == 0);
}

TEST_CASE("cpu bf16: the operands of every GEMM share one scratch region, sized by the largest",
          "[ops][cpu][bf16][memory]") {
  const std::vector<float> x_small = test::uniform({8, 16}, 9), w_small = test::uniform({8, 16}, 10);
  const std::vector<float> x_large = test::uniform({64, 128}, 11), w_large = test::uniform({96, 128}, 12);
  KernelScope scope;
  Gemm small("Linear", 8, 8, 16, &x_small, &w_small, "own"), large("Linear", 64, 96, 128, &x_large, &w_large, "own");
  Gemm large_again("Linear", 64, 96, 128, &x_large, &w_large, "own");
  small.prepare_cpu(scope);
  large.prepare_cpu(scope);
  const size_t one = scope.scratch_size();
  large_again.prepare_cpu(scope);
  CHECK(scope.scratch_size() == one);  // not one per op
  // x and w of the large one, bf16 (or f32 on the fallback), nothing more.
  const size_t values = 64 * 128 + 96 * 128, per_value = uses_copies() ? 2 : 4;
  CHECK(one >= values * per_value);
  CHECK(one <= values * per_value + 64);
  CHECK(scope.live_shared() == 0);  // no weight is frozen or paired
  check_same(small.run_cpu(), small.run_ref());
  check_same(large.run_cpu(), large.run_ref());
  check_same(large_again.run_cpu(), large_again.run_ref());
}

#endif
