// The smallest app that fine-tunes on the device: open a blob compiled with a recipe, train on the
// app's own data, save a checkpoint, restore it (as after a restart) and classify.
//   minimal_app MODEL.pock [CHECKPOINT]   (input "x" f32 [B, ...], label "label", output "logits" [B, C])
#include <cstdio>
#include <string>
#include <vector>

#include "pock/engine.hpp"

// Stops the app with the engine's message when a call fails.
#define CHECK(call) if (auto s = (call); !s.is_ok()) { std::fprintf(stderr, "%s\n", s.to_string().c_str()); return 1; }

// The app's own data: sample i belongs to class i % C and lights up the features j with j % C == its class.
void make_batch(int64_t batch, int64_t features, int64_t classes, std::vector<float>* x, std::vector<int64_t>* y) {
  x->resize(batch * features);
  y->resize(batch);
  for (int64_t i = 0; i < batch; ++i) {
    (*y)[i] = i % classes;
    for (int64_t j = 0; j < features; ++j) (*x)[i * features + j] = j % classes == (*y)[i] ? 1.0f : -1.0f;
  }
}

int main(int argc, char** argv) {
  if (argc < 2) return std::fprintf(stderr, "usage: %s MODEL.pock [CHECKPOINT]\n", argv[0]), 2;
  const std::string checkpoint = argc > 2 ? argv[2] : "minimal_app.ckpt";
  auto engine = pock::Engine::open(argv[1]);
  CHECK(engine.status());
  auto x_info = engine->info("x");
  auto logits_info = engine->info("logits");
  CHECK(x_info.status());
  CHECK(logits_info.status());
  const int64_t batch = x_info->dims[0], classes = logits_info->dims[logits_info->rank - 1];
  std::vector<float> x;
  std::vector<int64_t> labels;
  make_batch(batch, x_info->nbytes / sizeof(float) / batch, classes, &x, &labels);

  for (int step = 1; step <= 100; ++step) {
    CHECK(engine->set_input("x", x));
    CHECK(engine->set_input("label", labels));
    auto loss = engine->train_step();
    CHECK(loss.status());
    if (step == 1 || step % 25 == 0) std::printf("step %d  loss %.3g\n", step, *loss);
  }
  CHECK(engine->save_checkpoint(checkpoint));
  CHECK(engine->load_checkpoint(checkpoint));  // what an app does when it starts again

  CHECK(engine->infer());
  auto logits = engine->output<float>("logits");
  CHECK(logits.status());
  int correct = 0;
  for (int64_t i = 0; i < batch; ++i) {
    const float* row = logits->data() + i * classes;
    int64_t best = 0;
    for (int64_t c = 1; c < classes; ++c) best = row[c] > row[best] ? c : best;
    correct += best == labels[i];
  }
  std::printf("checkpoint %s, accuracy %d/%lld\n", checkpoint.c_str(), correct, static_cast<long long>(batch));
  return 0;
}
