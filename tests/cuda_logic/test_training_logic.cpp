// The cuda training family's logic (kernels/cuda/training_logic.hpp), run on the host exactly as
// training.cu's kernels run it — scalars from the step counter, then each element — against the
// reference kernels on random inputs over several steps.
// Tolerance: the logic repeats ref's formulas in ref's precision, so the only differences are
// fused multiply-adds a compiler may form in one and not the other (an ulp per operation, a few
// ulps after several steps) and, for the losses, the order in which a sum is added: 2e-6
// relative. A wrong formula, sign, schedule or bias correction is off by 1e-3 or more.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <vector>

#include "kernels/cuda/training_params.hpp"
#include "support/op_runner.hpp"
#include "tests/cuda_logic/ref_op.hpp"

using namespace pock;
using namespace pock::cuda;
using pock::test::RefOp;

namespace {

constexpr double kTolerance = 2e-6;


void check_close(const std::vector<float>& got, const std::vector<float>& want, const char* what) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO(what << "[" << i << "]: logic " << got[i] << ", ref " << want[i]);
    REQUIRE(std::fabs(got[i] - want[i]) <= kTolerance * (std::fabs(want[i]) + 1.0));
  }
}

// The optimizer attributes every case shares: a schedule with warm-up and (for cosine) decay.
RefOp& schedule_attrs(RefOp& op, const char* schedule, int64_t accumulation) {
  return op.real("lr", 0.05).text("schedule", schedule).integer("warmup_steps", 2).integer("total_steps", 7)
      .real("min_lr", 0.005).real("weight_decay", 0.01).integer("accumulation", accumulation);
}

}  // namespace

TEST_CASE("the device learning-rate schedule equals the shared one at every update", "[cuda_logic]") {
  for (auto kind : {params::LrSchedule::Kind::kConstant, params::LrSchedule::Kind::kLinearWarmup,
                    params::LrSchedule::Kind::kCosine}) {
    for (int64_t accumulation : {1, 3}) {
      params::UpdateParams p;
      p.schedule.kind = kind;
      p.schedule.lr = 0.1;
      p.schedule.warmup_steps = 3;
      p.schedule.total_steps = 12;
      p.schedule.min_lr = 0.01;
      p.accumulation = accumulation;
      const ScheduleLogic s = schedule_logic(p);
      for (int64_t step = 0; step <= 40; ++step) {
        INFO("kind " << static_cast<int>(kind) << ", accumulation " << accumulation << ", step " << step);
        REQUIRE(s.update_index(step) == p.update_index(step));
        const int64_t u = p.update_index(step);
        if (u > 0) REQUIRE(s.lr_at(u) == Approx(p.schedule.at(u)).epsilon(1e-12));
      }
      REQUIRE(s.gradient_scale(0.5f) == p.gradient_scale(0.5f));
    }
  }
}

TEST_CASE("SgdUpdate logic equals ref over several steps", "[cuda_logic]") {
  for (int variant = 0; variant < 4; ++variant) {
    const bool nesterov = variant & 1;
    const int64_t accumulation = variant & 2 ? 2 : 1;
    const char* schedule = variant & 2 ? "cosine" : "linear_warmup";
    INFO("nesterov " << nesterov << ", accumulation " << accumulation);
    constexpr size_t kParam = 40, kGrad = 32;  // a partial-channel gradient: the leading rows only
    std::vector<float> p_ref = test::random_floats(kParam, 1), p_logic = p_ref;
    std::vector<float> buf_ref(kParam, 0.0f), buf_logic = buf_ref;
    float clip = 0.75f;
    for (int64_t step = 1; step <= 6; ++step) {
      std::vector<float> g_ref = test::random_floats(kGrad, 100 + static_cast<uint32_t>(step)), g_logic = g_ref;
      int64_t step_value = step;
      RefOp op("SgdUpdate");
      op.input(POCK_F32, {40}, p_ref.data()).input(POCK_F32, {32}, g_ref.data()).input(POCK_I64, {}, &step_value)
          .input(POCK_F32, {40}, buf_ref.data()).input(POCK_F32, {}, &clip);
      schedule_attrs(op, schedule, accumulation).real("momentum", 0.9).integer("nesterov", nesterov);
      params::SgdUpdateParams h;
      REQUIRE(parse(op.desc(), &h).is_ok());
      op.run();
      // As training.cu's update_kernel: the update's scalars from the step, then every element.
      const ScheduleLogic s = schedule_logic(h);
      if (const int64_t u = s.update_index(step)) {
        SgdElement e = sgd_element(h);
        e.lr = static_cast<float>(s.lr_at(u));
        e.scale = s.gradient_scale(clip);
        for (int64_t i = 0; i < static_cast<int64_t>(kGrad); ++i) e(p_logic.data(), g_logic.data(), buf_logic.data(), i);
      }
      check_close(p_logic, p_ref, "param");
      check_close(buf_logic, buf_ref, "momentum");
      check_close(g_logic, g_ref, "gradient (zeroed when it accumulates)");
    }
  }
}

TEST_CASE("AdamUpdate logic (Adam and AdamW) equals ref over several steps", "[cuda_logic]") {
  for (int decoupled = 0; decoupled < 2; ++decoupled) {
    INFO("decoupled " << decoupled);
    constexpr size_t kN = 50;
    std::vector<float> p_ref = test::random_floats(kN, 7), p_logic = p_ref;
    std::vector<float> m_ref(kN, 0.0f), m_logic = m_ref, v_ref(kN, 0.0f), v_logic = v_ref;
    for (int64_t step = 1; step <= 8; ++step) {
      std::vector<float> g_ref = test::random_floats(kN, 200 + static_cast<uint32_t>(step), -0.1f, 0.1f), g_logic = g_ref;
      int64_t step_value = step;
      RefOp op("AdamUpdate");
      op.input(POCK_F32, {50}, p_ref.data()).input(POCK_F32, {50}, g_ref.data()).input(POCK_I64, {}, &step_value)
          .input(POCK_F32, {50}, m_ref.data()).input(POCK_F32, {50}, v_ref.data());
      schedule_attrs(op, "cosine", 1).real("beta1", 0.85).real("beta2", 0.99).real("eps", 1e-6)
          .integer("decoupled", decoupled);
      params::AdamUpdateParams h;
      REQUIRE(parse(op.desc(), &h).is_ok());
      op.run();
      const ScheduleLogic s = schedule_logic(h);
      if (const int64_t u = s.update_index(step)) {
        AdamElement e = adam_element(h);
        e.lr = s.lr_at(u);
        e.set_update(u);
        e.scale = s.gradient_scale(1.0f);
        for (int64_t i = 0; i < static_cast<int64_t>(kN); ++i) e(p_logic.data(), g_logic.data(), m_logic.data(), v_logic.data(), i);
      }
      check_close(p_logic, p_ref, "param");
      check_close(m_logic, m_ref, "exp_avg");
      check_close(v_logic, v_ref, "exp_avg_sq");
    }
  }
}

TEST_CASE("MseLoss and MseLossGrad logic equal ref", "[cuda_logic]") {
  std::vector<float> p = test::random_floats(37, 11), t = test::random_floats(37, 12);
  float loss_ref = 0.0f;
  RefOp("MseLoss").input(POCK_F32, {37}, p.data()).input(POCK_F32, {37}, t.data()).output(POCK_F32, {}, &loss_ref).run();
  double total = 0.0;
  for (size_t i = 0; i < p.size(); ++i) total += mse_term(p[i], t[i]);
  check_close({mean_or_zero(total, 37)}, {loss_ref}, "loss");

  float dloss = 1.7f;
  std::vector<float> dp_ref(37), dp_logic(37);
  RefOp("MseLossGrad").input(POCK_F32, {}, &dloss).input(POCK_F32, {37}, p.data()).input(POCK_F32, {37}, t.data())
      .output(POCK_F32, {37}, dp_ref.data()).run();
  for (size_t i = 0; i < p.size(); ++i) dp_logic[i] = mse_grad(dloss, p[i], t[i], 37);
  check_close(dp_logic, dp_ref, "dprediction");
}

TEST_CASE("SoftmaxCrossEntropy and its gradient logic equal ref, with smoothing and ignored rows", "[cuda_logic]") {
  constexpr int64_t kRows = 6, kClasses = 9;
  std::vector<float> x = test::random_floats(kRows * kClasses, 21, -4.0f, 4.0f);
  std::vector<int64_t> labels = {3, -100, 0, 8, -100, 5};
  for (double smoothing : {0.0, 0.1}) {
    INFO("label_smoothing " << smoothing);
    float loss_ref = 0.0f;
    RefOp("SoftmaxCrossEntropy").input(POCK_F32, {kRows, kClasses}, x.data()).input(POCK_I64, {kRows}, labels.data())
        .output(POCK_F32, {}, &loss_ref).real("label_smoothing", smoothing).run();
    float dloss = 0.8f;
    std::vector<float> dx_ref(x.size()), dx_logic(x.size());
    RefOp("SoftmaxCrossEntropyGrad").input(POCK_F32, {}, &dloss).input(POCK_F32, {kRows, kClasses}, x.data())
        .input(POCK_I64, {kRows}, labels.data()).output(POCK_F32, {kRows, kClasses}, dx_ref.data())
        .real("label_smoothing", smoothing).run();
    // As the row kernels: the row's max, then lse and mean in double.
    double total = 0.0;
    int64_t counted = 0;
    for (int64_t r = 0; r < kRows; ++r) counted += labels[r] != -100;
    for (int64_t r = 0; r < kRows; ++r) {
      const float* row = x.data() + r * kClasses;
      float* d = dx_logic.data() + r * kClasses;
      if (labels[r] == -100) {
        for (int64_t k = 0; k < kClasses; ++k) d[k] = 0.0f;
        continue;
      }
      float m = row[0];
      for (int64_t k = 1; k < kClasses; ++k) m = std::fmax(m, row[k]);
      double s = 0.0, sx = 0.0;
      for (int64_t k = 0; k < kClasses; ++k) {
        s += std::exp(static_cast<double>(row[k]) - m);
        sx += row[k];
      }
      const double lse = m + std::log(s);
      total += cross_entropy_row(lse, row[labels[r]], sx / kClasses, smoothing);
      for (int64_t k = 0; k < kClasses; ++k) {
        d[k] = cross_entropy_grad(row[k], lse, k == labels[r], smoothing, kClasses, dloss / static_cast<double>(counted));
      }
    }
    check_close({mean_or_zero(total, counted)}, {loss_ref}, "loss");
    check_close(dx_logic, dx_ref, "dlogits");
  }
}

TEST_CASE("GlobalNormClipScale logic equals ref, clipping and not", "[cuda_logic]") {
  std::vector<float> a = test::random_floats(30, 31), b = test::random_floats(7, 32);
  for (double max_norm : {0.5, 100.0}) {
    float scale_ref = 0.0f;
    RefOp("GlobalNormClipScale").input(POCK_F32, {30}, a.data()).input(POCK_F32, {7}, b.data())
        .output(POCK_F32, {}, &scale_ref).real("grad_scale", 0.5).real("max_norm", max_norm).run();
    double sum = 0.0;
    for (const std::vector<float>* g : {&a, &b}) {
      for (float v : *g) sum += (v * 0.5) * (v * 0.5);
    }
    check_close({clip_coefficient(sum, max_norm)}, {scale_ref}, "scale");
    if (max_norm > 50.0) REQUIRE(scale_ref == 1.0f);
  }
}
