// Each optimizer against its closed-form update, written out here in double over several steps:
// torch.optim.SGD (momentum, Nesterov, weight decay), Adam and AdamW with bias correction, the
// learning-rate schedules, gradient accumulation and global-norm clipping.
#include <cmath>
#include <cstring>
#include <functional>
#include <memory>

#include <catch2/catch.hpp>

#include "pock/compiler/compiler.hpp"
#include "pock/engine.hpp"
#include "support/op_runner.hpp"

using namespace pock;
using pock::test::random_floats;

namespace {

using Vec = std::vector<double>;
constexpr int kN = 4;

// A compiled model and its engine; the engine reads the blob in place, so they travel together.
struct Trainer {
  std::shared_ptr<std::vector<uint8_t>> blob;
  Engine engine;
};

// Model: pred = Identity(w), loss = mse(pred, target) = mean((w - t)^2), so dL/dw = 2 (w - t) / n.
Trainer compile_mse_model(const std::vector<float>& w0, Recipe recipe) {
  Graph g;
  const TensorId w = g.add_parameter_f32("w", {kN}, w0);
  auto pred = g.add_node("Identity", {w}, {}, "pred", {"pred"});
  REQUIRE(pred.is_ok());
  REQUIRE(g.mark_output(pred.value()[0]).is_ok());
  recipe.loss.type = "mse";
  recipe.loss.labels = "target";
  auto blob = compile(g, &recipe);
  REQUIRE(blob.is_ok());
  auto bytes = std::make_shared<std::vector<uint8_t>>(std::move(blob.value()));
  auto engine = Engine::open_buffer(bytes->data(), bytes->size());
  REQUIRE(engine.is_ok());
  return Trainer{bytes, std::move(engine.value())};
}

std::vector<float> targets_for(int step) { return random_floats(kN, 100 + step, -1.0f, 1.0f); }

Vec mse_grad(const Vec& w, const std::vector<float>& t) {
  Vec g(kN);
  for (int i = 0; i < kN; ++i) g[i] = 2.0 * (w[i] - t[i]) / kN;
  return g;
}

// Runs `steps` train steps on the engine and, alongside, `reference(w, grad, step)` in double.
void compare(Engine& e, const std::vector<float>& w0, int steps, const std::function<void(Vec&, const Vec&, int)>& reference) {
  Vec w(w0.begin(), w0.end());
  for (int s = 1; s <= steps; ++s) {
    const std::vector<float> t = targets_for(s);
    REQUIRE(e.set_input("target", t).is_ok());
    REQUIRE(e.train_step().is_ok());
    reference(w, mse_grad(w, t), s);
    std::vector<float> got(kN);
    REQUIRE(e.get_parameter("w", got.data(), got.size() * sizeof(float)).is_ok());
    for (int i = 0; i < kN; ++i) {
      INFO("step " << s << " element " << i);
      CHECK(got[i] == Approx(w[i]).epsilon(1e-5).margin(1e-6));
    }
  }
}

const std::vector<float> kW0{0.5f, -0.3f, 0.8f, -1.2f};

}  // namespace

TEST_CASE("SGD matches torch.optim.SGD with momentum, Nesterov and weight decay", "[train][optimizer]") {
  struct Case {
    double momentum, weight_decay;
    bool nesterov;
  };
  for (const Case& c : {Case{0.0, 0.0, false}, Case{0.9, 0.0, false}, Case{0.9, 0.01, true}, Case{0.0, 0.1, false}}) {
    INFO("momentum " << c.momentum << " weight_decay " << c.weight_decay << " nesterov " << c.nesterov);
    Recipe r;
    r.optimizer.type = "sgd";
    r.optimizer.lr = 0.1;
    r.optimizer.momentum = c.momentum;
    r.optimizer.nesterov = c.nesterov;
    r.optimizer.weight_decay = c.weight_decay;
    Trainer t = compile_mse_model(kW0, r);
    Vec buf(kN, 0.0);
    compare(t.engine, kW0, 6, [&](Vec& w, const Vec& grad, int step) {
      for (int i = 0; i < kN; ++i) {
        double g = grad[i] + c.weight_decay * w[i];
        if (c.momentum != 0.0) {
          buf[i] = step == 1 ? g : c.momentum * buf[i] + g;
          g = c.nesterov ? g + c.momentum * buf[i] : buf[i];
        }
        w[i] -= 0.1 * g;
      }
    });
  }
}

TEST_CASE("Adam and AdamW match torch.optim with bias correction", "[train][optimizer]") {
  for (const char* type : {"adam", "adamw"}) {
    for (double wd : {0.0, 0.05}) {
      INFO(type << " weight_decay " << wd);
      Recipe r;
      r.optimizer.type = type;
      r.optimizer.lr = 0.01;
      r.optimizer.beta1 = 0.8;
      r.optimizer.beta2 = 0.95;
      r.optimizer.eps = 1e-6;
      r.optimizer.weight_decay = wd;
      Trainer t = compile_mse_model(kW0, r);
      Vec m(kN, 0.0), v(kN, 0.0);
      const bool decoupled = std::string(type) == "adamw";
      compare(t.engine, kW0, 6, [&](Vec& w, const Vec& grad, int step) {
        for (int i = 0; i < kN; ++i) {
          double g = grad[i];
          if (decoupled) {
            w[i] *= 1.0 - 0.01 * wd;
          } else {
            g += wd * w[i];
          }
          m[i] = 0.8 * m[i] + 0.2 * g;
          v[i] = 0.95 * v[i] + 0.05 * g * g;
          const double m_hat = m[i] / (1.0 - std::pow(0.8, step));
          const double v_hat = v[i] / (1.0 - std::pow(0.95, step));
          // torch: p -= lr/bc1 * m / (sqrt(v)/sqrt(bc2) + eps) == lr * m_hat / (sqrt(v_hat) + eps)
          w[i] -= 0.01 * m_hat / (std::sqrt(v_hat) + 1e-6);
        }
      });
    }
  }
}

TEST_CASE("learning-rate schedules follow their documented formulas", "[train][optimizer][schedule]") {
  // L = sum(w * c): the gradient is the constant c, so each step moves w by exactly lr_u * c.
  const std::vector<float> c{1.0f, -2.0f};
  auto measured_rates = [&](Recipe r, int steps) {
    Graph g;
    const TensorId w = g.add_parameter_f32("w", {2}, {0.0f, 0.0f});
    std::vector<uint8_t> cb(8);
    std::memcpy(cb.data(), c.data(), 8);
    const TensorId ct = g.add_constant("c", DType::kF32, {2}, cb);
    auto prod = g.add_node("Mul", {w, ct});
    REQUIRE(prod.is_ok());
    auto sum = g.add_node("ReduceSum", {prod.value()[0]}, Attrs{{"keepdims", int64_t{0}}}, "L", {"L"});
    REQUIRE(sum.is_ok());
    REQUIRE(g.mark_output(sum.value()[0]).is_ok());
    r.loss.type = "output";
    auto blob = compile(g, &r);
    REQUIRE(blob.is_ok());
    auto e = Engine::open_buffer(blob->data(), blob->size());
    REQUIRE(e.is_ok());
    std::vector<double> rates;
    std::vector<float> before(2), after(2);
    for (int s = 0; s < steps; ++s) {
      REQUIRE(e->get_parameter("w", before.data(), 8).is_ok());
      REQUIRE(e->train_step().is_ok());
      REQUIRE(e->get_parameter("w", after.data(), 8).is_ok());
      rates.push_back((static_cast<double>(before[1]) - after[1]) / c[1]);
    }
    return rates;
  };
  SECTION("linear warm-up: lr * u / warmup, then lr") {
    Recipe r;
    r.optimizer.lr = 0.1;
    r.schedule.type = "linear_warmup";
    r.schedule.warmup_steps = 4;
    const std::vector<double> got = measured_rates(r, 6);
    const std::vector<double> want{0.025, 0.05, 0.075, 0.1, 0.1, 0.1};
    for (size_t u = 0; u < want.size(); ++u) CHECK(got[u] == Approx(want[u]).epsilon(1e-4));
  }
  SECTION("cosine: warm-up, then lr at warmup+1 down to min_lr at total_steps") {
    Recipe r;
    r.optimizer.lr = 0.1;
    r.schedule.type = "cosine";
    r.schedule.warmup_steps = 2;
    r.schedule.total_steps = 8;
    r.schedule.min_lr = 0.01;
    const std::vector<double> got = measured_rates(r, 10);
    for (int u = 1; u <= 10; ++u) {
      double want;
      if (u <= 2) {
        want = 0.1 * u / 2;
      } else {
        const double progress = std::min(1.0, (u - 3) / 5.0);
        want = 0.01 + 0.09 * 0.5 * (1 + std::cos(M_PI * progress));
      }
      INFO("update " << u);
      CHECK(got[u - 1] == Approx(want).epsilon(1e-4));
    }
  }
}

TEST_CASE("gradient accumulation applies the mean gradient every k-th step", "[train][optimizer][accumulation]") {
  for (const char* type : {"sgd", "adam"}) {
    INFO(type);
    Recipe r;
    r.optimizer.type = type;
    r.optimizer.lr = 0.05;
    if (std::string(type) == "sgd") r.optimizer.momentum = 0.9;
    r.grad_accumulation = 3;
    Trainer t = compile_mse_model(kW0, r);
    Vec sum(kN, 0.0), buf(kN, 0.0), m(kN, 0.0), v(kN, 0.0);
    compare(t.engine, kW0, 9, [&](Vec& w, const Vec& grad, int step) {
      for (int i = 0; i < kN; ++i) sum[i] += grad[i];
      if (step % 3 != 0) return;  // micro-batches only accumulate
      const int u = step / 3;    // the optimizer's own step count
      for (int i = 0; i < kN; ++i) {
        const double g = sum[i] / 3;
        sum[i] = 0;
        if (std::string(type) == "sgd") {
          buf[i] = u == 1 ? g : 0.9 * buf[i] + g;
          w[i] -= 0.05 * buf[i];
        } else {
          m[i] = 0.9 * m[i] + 0.1 * g;
          v[i] = 0.999 * v[i] + 0.001 * g * g;
          w[i] -= 0.05 * (m[i] / (1 - std::pow(0.9, u))) / (std::sqrt(v[i] / (1 - std::pow(0.999, u))) + 1e-8);
        }
      }
    });
  }
}

TEST_CASE("global-norm clipping scales every gradient by max_norm / total norm", "[train][optimizer][clip]") {
  // L = sum(a * a) + sum(b * c): gradients 2a and c; one norm over both parameters.
  const std::vector<float> a0{0.5f, -1.0f, 1.5f}, b0{0.2f, 0.4f}, c{3.0f, -4.0f};
  Graph g;
  const TensorId a = g.add_parameter_f32("a", {3}, a0);
  const TensorId b = g.add_parameter_f32("b", {2}, b0);
  std::vector<uint8_t> cb(8);
  std::memcpy(cb.data(), c.data(), 8);
  const TensorId ct = g.add_constant("c", DType::kF32, {2}, cb);
  auto aa = g.add_node("Mul", {a, a});
  auto bc = g.add_node("Mul", {b, ct});
  REQUIRE((aa.is_ok() && bc.is_ok()));
  auto sa = g.add_node("ReduceSum", {aa.value()[0]}, Attrs{{"keepdims", int64_t{0}}});
  auto sb = g.add_node("ReduceSum", {bc.value()[0]}, Attrs{{"keepdims", int64_t{0}}});
  REQUIRE((sa.is_ok() && sb.is_ok()));
  auto total = g.add_node("Add", {sa.value()[0], sb.value()[0]}, {}, "L", {"L"});
  REQUIRE(total.is_ok());
  REQUIRE(g.mark_output(total.value()[0]).is_ok());
  Recipe r;
  r.loss.type = "output";
  r.optimizer.lr = 0.1;
  r.clip_grad_norm = 1.0;
  auto blob = compile(g, &r);
  REQUIRE(blob.is_ok());
  auto e = Engine::open_buffer(blob->data(), blob->size());
  REQUIRE(e.is_ok());
  Vec av(a0.begin(), a0.end()), bv(b0.begin(), b0.end());
  for (int s = 0; s < 3; ++s) {
    REQUIRE(e->train_step().is_ok());
    double sq = 0;
    for (double x : av) sq += 4 * x * x;
    for (float x : c) sq += static_cast<double>(x) * x;
    const double coef = std::min(1.0, 1.0 / (std::sqrt(sq) + 1e-6));
    REQUIRE(coef < 1.0);  // the test is about clipping: make sure it happens
    for (double& x : av) x -= 0.1 * coef * 2 * x;
    for (size_t i = 0; i < bv.size(); ++i) bv[i] -= 0.1 * coef * c[i];
    std::vector<float> got_a(3), got_b(2);
    REQUIRE(e->get_parameter("a", got_a.data(), 12).is_ok());
    REQUIRE(e->get_parameter("b", got_b.data(), 8).is_ok());
    for (size_t i = 0; i < 3; ++i) CHECK(got_a[i] == Approx(av[i]).epsilon(1e-5));
    for (size_t i = 0; i < 2; ++i) CHECK(got_b[i] == Approx(bv[i]).epsilon(1e-5));
  }
}
