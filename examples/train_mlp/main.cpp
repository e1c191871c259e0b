// Trains a small MLP on device-style: build the model with the Graph API, compile it with a
// recipe into one blob (forward + backward + optimizer, one static arena), then run training
// steps and inference through pock::Engine.
//
//   train_mlp [--steps N] [--save FILE.pock]
//
// While this build cannot compile a training step (the compiler refuses the recipe), it says so
// and falls back to inference with the initial weights. Exit codes: 0 done, 1 error, 2 usage,
// 77 this build lacks an op the model needs (ctest reports it as skipped).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "mlp.hpp"
#include "pock/compiler/compiler.hpp"
#include "pock/engine.hpp"

namespace {

constexpr int kSkipped = 77;

struct Args {
  int steps = 300;
  std::string save_path;
};

bool parse_args(int argc, char** argv, Args* args) {
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--steps") && i + 1 < argc) {
      args->steps = std::atoi(argv[++i]);
    } else if (!std::strcmp(argv[i], "--save") && i + 1 < argc) {
      args->save_path = argv[++i];
    } else {
      return false;
    }
  }
  return args->steps >= 0;
}

pock::Recipe make_recipe() {
  pock::Recipe recipe;
  recipe.loss.type = "cross_entropy";
  recipe.loss.logits = "logits";
  recipe.loss.labels = "label";
  recipe.optimizer.type = "sgd";
  recipe.optimizer.lr = 0.1;
  recipe.optimizer.momentum = 0.9;
  return recipe;  // no trainable rules: every parameter trains
}

int fail(const char* what, const pock::Status& status) {
  std::fprintf(stderr, "%s: %s\n", what, status.to_string().c_str());
  return 1;
}

// The label input's dtype is the compiler's choice (i64 class indices, or i32).
pock::Status set_labels(pock::Engine& engine, const std::vector<int64_t>& labels) {
  POCK_ASSIGN_OR_RETURN(pock_tensor_info info, engine.info("label"));
  if (info.dtype == POCK_I64) return engine.set_input("label", labels);
  if (info.dtype == POCK_I32) return engine.set_input("label", std::vector<int32_t>(labels.begin(), labels.end()));
  return pock::Status(pock::Code::kShapeMismatch, "unexpected label dtype");
}

pock::Result<double> accuracy(pock::Engine& engine, example::ClusterData& data, int batches) {
  std::vector<float> x;
  std::vector<int64_t> labels;
  int64_t correct = 0, total = 0;
  for (int b = 0; b < batches; ++b) {
    data.next_batch(&x, &labels);
    POCK_RETURN_IF_ERROR(engine.set_input("x", x));
    POCK_RETURN_IF_ERROR(engine.infer());
    POCK_ASSIGN_OR_RETURN(std::vector<float> logits, engine.output<float>("logits"));
    for (int64_t i = 0; i < example::kBatch; ++i) {
      int64_t best = 0;
      for (int64_t c = 1; c < example::kClasses; ++c) {
        if (logits[i * example::kClasses + c] > logits[i * example::kClasses + best]) best = c;
      }
      correct += best == labels[i];
      ++total;
    }
  }
  return static_cast<double>(correct) / static_cast<double>(total);
}

// Runs `steps` training steps; returns the mean loss of the first and of the last ten steps.
pock::Result<std::pair<float, float>> train(pock::Engine& engine, example::ClusterData& data, int steps) {
  std::vector<float> x, losses;
  std::vector<int64_t> labels;
  for (int step = 1; step <= steps; ++step) {
    data.next_batch(&x, &labels);
    POCK_RETURN_IF_ERROR(engine.set_input("x", x));
    POCK_RETURN_IF_ERROR(set_labels(engine, labels));
    POCK_ASSIGN_OR_RETURN(float loss, engine.train_step());
    losses.push_back(loss);
    if (step == 1 || step % 50 == 0 || step == steps) std::printf("  step %4d  loss %.4f\n", step, loss);
  }
  auto mean = [](auto begin, auto end) {
    float sum = 0;
    for (auto it = begin; it != end; ++it) sum += *it;
    return sum / static_cast<float>(end - begin);
  };
  if (losses.empty()) return std::make_pair(0.0f, 0.0f);
  const size_t window = std::min<size_t>(10, losses.size());
  return std::make_pair(mean(losses.begin(), losses.begin() + window), mean(losses.end() - window, losses.end()));
}

}  // namespace

int main(int argc, char** argv) {
  Args args;
  if (!parse_args(argc, argv, &args)) {
    std::fprintf(stderr, "usage: %s [--steps N] [--save FILE.pock]\n", argv[0]);
    return 2;
  }
  auto graph = example::build_mlp(/*seed=*/1);
  if (!graph.is_ok()) {
    if (graph.status().code() == pock::Code::kUnsupportedOp) {
      std::printf("skipped: this build cannot express the model yet: %s\n", graph.status().message().c_str());
      return kSkipped;
    }
    return fail("building the model", graph.status());
  }

  const pock::Recipe recipe = make_recipe();
  pock::CompileReport report;
  auto blob = pock::compile(graph.value(), &recipe, {}, &report);
  bool training = blob.is_ok();
  if (!training) {
    std::printf("training: NOT AVAILABLE in this build; the compiler refused the recipe:\n  %s\n",
                blob.status().to_string().c_str());
    std::printf("falling back to inference only: the weights stay at their initial values\n");
    blob = pock::compile(graph.value(), nullptr, {}, &report);
    if (!blob.is_ok()) return fail("compiling for inference", blob.status());
  }
  std::printf("blob: %zu bytes (%s), weights %llu B, arena %llu B\n", blob->size(),
              training ? "train + infer" : "infer only", static_cast<unsigned long long>(report.weights_bytes),
              static_cast<unsigned long long>(report.arena_peak_bytes));
  if (!args.save_path.empty()) {
    // The same bytes compile_to_file would write; kept in memory here to run them as well.
    FILE* f = std::fopen(args.save_path.c_str(), "wb");
    if (!f || std::fwrite(blob->data(), 1, blob->size(), f) != blob->size() || std::fclose(f) != 0) {
      std::fprintf(stderr, "cannot write %s\n", args.save_path.c_str());
      return 1;
    }
    std::printf("saved %s\n", args.save_path.c_str());
  }

  auto engine = pock::Engine::open_buffer(blob->data(), blob->size());
  if (!engine.is_ok()) return fail("opening the blob", engine.status());
  example::ClusterData data(/*seed=*/7);
  auto before = accuracy(engine.value(), data, 8);
  if (!before.is_ok()) return fail("inference", before.status());
  std::printf("accuracy before training: %.1f%%\n", 100.0 * before.value());
  if (!training) {
    std::printf("done (inference only; %d training steps were not run)\n", args.steps);
    return 0;
  }

  std::printf("training %d steps (sgd, lr %.3g, momentum %.2g)\n", args.steps, recipe.optimizer.lr,
              recipe.optimizer.momentum);
  auto losses = train(engine.value(), data, args.steps);
  if (!losses.is_ok()) return fail("training", losses.status());
  auto after = accuracy(engine.value(), data, 8);
  if (!after.is_ok()) return fail("inference", after.status());
  std::printf("accuracy after training: %.1f%% (loss %.4f -> %.4f)\n", 100.0 * after.value(), losses->first,
              losses->second);
  if (args.steps >= 50 && !(losses->second < losses->first)) {
    std::fprintf(stderr, "training did not lower the loss\n");
    return 1;
  }
  return 0;
}
