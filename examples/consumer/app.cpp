// The device half of the consumer: an app that links pock::runtime alone (find_package(PockEngine
// COMPONENTS runtime)), opens the blob that pock_consumer_compile wrote, checks one inference and
// trains. Exits non-zero when anything differs from the expected result. Usage: pock_consumer_app IN.pock
#include <cmath>
#include <cstdio>
#include <vector>

#include <pock/engine.hpp>

int main(int argc, char** argv) {
  if (argc != 2) return std::fprintf(stderr, "usage: pock_consumer_app IN.pock\n"), 2;
  auto engine = pock::Engine::open(argv[1]);
  if (!engine.is_ok()) return std::fprintf(stderr, "open: %s\n", engine.status().to_string().c_str()), 1;
  if (!engine->set_input("x", std::vector<float>{1, 1, -3, 3}).is_ok()) return 1;
  if (pock::Status s = engine->infer(); !s.is_ok()) return std::fprintf(stderr, "infer: %s\n", s.to_string().c_str()), 1;
  auto out = engine->output<float>("y");
  if (!out.is_ok()) return 1;
  const std::vector<float> expected = {1.5f, 0.5f, 0.0f, 2.0f};  // relu(x + bias)
  bool ok = out->size() == expected.size();
  std::printf("y =");
  for (size_t i = 0; i < out->size(); ++i) {
    std::printf(" %g", (*out)[i]);
    ok = ok && std::fabs((*out)[i] - expected[i]) < 1e-6f;
  }

  // Training: the loss towards a target that the bias can reach must fall.
  if (!engine->set_input("target", std::vector<float>{2, 1, 0, 3}).is_ok()) return 1;
  float first = 0, last = 0;
  for (int step = 0; step < 30; ++step) {
    auto loss = engine->train_step();
    if (!loss.is_ok()) return std::fprintf(stderr, "train: %s\n", loss.status().to_string().c_str()), 1;
    if (step == 0) first = *loss;
    last = *loss;
  }
  ok = ok && last < first * 0.1f;
  std::printf("; mse %g -> %g after 30 steps: %s\n", first, last, ok ? "as expected" : "WRONG");
  return ok ? 0 : 1;
}
