// The cuda training family's logic (kernels/cuda/training_logic.hpp), run on the host exactly as
// training.cu's kernels run it — scalars from the step counter, then each element — against the
// reference kernels on random inputs over several steps.
// Tolerance: the logic repeats ref's formulas in ref's precision, so the only differences are
// fused multiply-adds a compiler may form in one and not the other (an ulp per operation, a few
// ulps after several steps) and, for the losses, the order in which a sum is added: 2e-6
// relative. A wrong formula, sign, schedule or bias correction is off by 1e-3 or more.
#include <cmath>
#include <random>
#include <vector>

#include "cuda_logic/logic_harness.hpp"
#include "kernels/cuda/training_params.hpp"

using namespace pock;
using namespace pock::cuda;
using pock::test::BoundOp;
using pock::test::HostBuffer;

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
Attrs schedule_attrs(const char* schedule, int64_t accumulation) {
  return {{"lr", 0.05},           {"schedule", std::string(schedule)}, {"warmup_steps", int64_t{2}},
          {"total_steps", int64_t{7}}, {"min_lr", 0.005},                  {"weight_decay", 0.01},
          {"accumulation", accumulation}};
}

// Runs ref's kernel on `op`: its outputs, and the inputs it updated in place.
struct RefRun {
  std::vector<HostBuffer> inputs, outputs;
};
RefRun run_ref(BoundOp& op) {
  INFO(op.op() << ": " << op.status().message());
  REQUIRE(op.status().is_ok());
  RefRun r;
  r.outputs = op.run_ref(&r.inputs);
  return r;
}

// The parameters the device kernel is given for `op`.
template <typename Params>
Params parsed_params(BoundOp& op) {
  std::vector<HostBuffer> outs = op.fresh_outputs();
  return test::parsed<Params>(op.bind(outs));
}

HostBuffer f32(const std::vector<float>& v) { return HostBuffer::f32({static_cast<int64_t>(v.size())}, v); }
HostBuffer scalar(float v) { return HostBuffer::f32({}, {v}); }
HostBuffer step_tensor(int64_t step) { return HostBuffer::i64({}, {step}); }

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
    std::vector<float> buf_ref(kGrad, 0.0f), buf_logic = buf_ref;  // state covers what the gradient covers
    const float clip = 0.75f;
    for (int64_t step = 1; step <= 6; ++step) {
      std::vector<float> g_ref = test::random_floats(kGrad, 100 + static_cast<uint32_t>(step)), g_logic = g_ref;
      Attrs attrs = schedule_attrs(schedule, accumulation);
      attrs.set("momentum", 0.9);
      attrs.set("nesterov", int64_t{nesterov});
      BoundOp op("SgdUpdate", {f32(p_ref), f32(g_ref), step_tensor(step), f32(buf_ref), scalar(clip)}, attrs);
      const auto h = parsed_params<params::SgdUpdateParams>(op);
      const RefRun ref = run_ref(op);
      p_ref = ref.inputs[0].f32();
      g_ref = ref.inputs[1].f32();
      buf_ref = ref.inputs[3].f32();
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
      Attrs attrs = schedule_attrs("cosine", 1);
      attrs.set("beta1", 0.85);
      attrs.set("beta2", 0.99);
      attrs.set("eps", 1e-6);
      attrs.set("decoupled", int64_t{decoupled});
      BoundOp op("AdamUpdate", {f32(p_ref), f32(g_ref), step_tensor(step), f32(m_ref), f32(v_ref)}, attrs);
      const auto h = parsed_params<params::AdamUpdateParams>(op);
      const RefRun ref = run_ref(op);
      p_ref = ref.inputs[0].f32();
      g_ref = ref.inputs[1].f32();
      m_ref = ref.inputs[3].f32();
      v_ref = ref.inputs[4].f32();
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
  BoundOp mse("MseLoss", {f32(p), f32(t)});
  const float loss_ref = run_ref(mse).outputs.at(0).f32().at(0);
  double total = 0.0;
  for (size_t i = 0; i < p.size(); ++i) total += mse_term(p[i], t[i]);
  check_close({mean_or_zero(total, 37)}, {loss_ref}, "loss");

  const float dloss = 1.7f;
  std::vector<float> dp_logic(37);
  BoundOp grad_op("MseLossGrad", {scalar(dloss), f32(p), f32(t)});
  const std::vector<float> dp_ref = run_ref(grad_op).outputs.at(0).f32();
  for (size_t i = 0; i < p.size(); ++i) dp_logic[i] = mse_grad(dloss, p[i], t[i], 37);
  check_close(dp_logic, dp_ref, "dprediction");
}

TEST_CASE("SoftmaxCrossEntropy and its gradient logic equal ref, with smoothing and ignored rows", "[cuda_logic]") {
  constexpr int64_t kRows = 6, kClasses = 9;
  std::vector<float> x = test::random_floats(kRows * kClasses, 21, -4.0f, 4.0f);
  std::vector<int64_t> labels = {3, -100, 0, 8, -100, 5};
  for (double smoothing : {0.0, 0.1}) {
    INFO("label_smoothing " << smoothing);
    const HostBuffer logits = HostBuffer::f32({kRows, kClasses}, x), label = HostBuffer::i64({kRows}, labels);
    BoundOp loss_op("SoftmaxCrossEntropy", {logits, label}, {{"label_smoothing", smoothing}});
    const float loss_ref = run_ref(loss_op).outputs.at(0).f32().at(0);
    const float dloss = 0.8f;
    std::vector<float> dx_logic(x.size());
    BoundOp grad_op("SoftmaxCrossEntropyGrad", {scalar(dloss), logits, label}, {{"label_smoothing", smoothing}});
    const std::vector<float> dx_ref = run_ref(grad_op).outputs.at(0).f32();
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
    BoundOp op("GlobalNormClipScale", {f32(a), f32(b)}, {{"grad_scale", 0.5}, {"max_norm", max_norm}});
    const float scale_ref = run_ref(op).outputs.at(0).f32().at(0);
    double sum = 0.0;
    for (const std::vector<float>* g : {&a, &b}) {
      for (float v : *g) sum += (v * 0.5) * (v * 0.5);
    }
    check_close({clip_coefficient(sum, max_norm)}, {scale_ref}, "scale");
    if (max_norm > 50.0) REQUIRE(scale_ref == 1.0f);
  }
}
