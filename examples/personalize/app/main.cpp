// The on-device half of the personalization demo: the app that fine-tunes a compiled blob on the
// user's own images and checks it on held-out ones. It links only pock_runtime.
//
//   personalize BLOB --train PREFIX --test PREFIX --steps N [--eval-every K] [--log LOG.jsonl]
//               [--summary SUMMARY.json] [--checkpoint CKPT] [--threads T] [--seed S] [--backend NAME]
//
// PREFIX names a pair of raw files (see sample_files.hpp). Every step trains on one batch of a
// seeded per-epoch shuffle; every K steps (and before the first) the held-out accuracy is
// measured. The log gets one JSON line per step ({"step","loss","ms","cpu_ms"}) and one per
// evaluation ({"step","test_accuracy"}); the summary gathers accuracy, time and memory.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <random>
#include <string>

#include "accuracy.hpp"
#include "process_stats.hpp"

namespace {

using namespace personalize;

struct Args {
  std::string blob, train, test, log, summary, checkpoint, backend;
  int64_t steps = 0, eval_every = 0, threads = 0, seed = 0;
};

bool parse_args(int argc, char** argv, Args* a) {
  if (argc < 2) return false;
  a->blob = argv[1];
  for (int i = 2; i + 1 < argc; i += 2) {
    const std::string key = argv[i], value = argv[i + 1];
    if (key == "--train") a->train = value;
    else if (key == "--test") a->test = value;
    else if (key == "--log") a->log = value;
    else if (key == "--summary") a->summary = value;
    else if (key == "--checkpoint") a->checkpoint = value;
    else if (key == "--backend") a->backend = value;
    else if (key == "--steps") a->steps = std::atoll(value.c_str());
    else if (key == "--eval-every") a->eval_every = std::atoll(value.c_str());
    else if (key == "--threads") a->threads = std::atoll(value.c_str());
    else if (key == "--seed") a->seed = std::atoll(value.c_str());
    else return false;
  }
  return argc % 2 == 0 && !a->train.empty() && !a->test.empty() && a->steps >= 1;
}

int fail(const std::string& what, const pock::Status& status) {
  std::fprintf(stderr, "personalize: %s: %s\n", what.c_str(), status.to_string().c_str());
  return 1;
}

// Visits every training sample once per epoch, in a fresh seeded order each epoch.
class Shuffler {
 public:
  Shuffler(int64_t count, uint64_t seed) : order_(static_cast<size_t>(count)), rng_(seed) {
    std::iota(order_.begin(), order_.end(), 0);
  }
  std::vector<int64_t> next(int64_t batch) {
    std::vector<int64_t> out;
    while (static_cast<int64_t>(out.size()) < batch) {
      if (at_ == 0) std::shuffle(order_.begin(), order_.end(), rng_);
      out.push_back(order_[at_]);
      at_ = (at_ + 1) % order_.size();
    }
    return out;
  }

 private:
  std::vector<int64_t> order_;
  std::mt19937_64 rng_;
  size_t at_ = 0;
};

struct Totals {
  double train_wall_s = 0, train_cpu_s = 0, accuracy_before = 0, accuracy_after = 0;
  float last_loss = 0;
};

void write_summary(const Args& a, const Totals& t, int64_t batch, int64_t rss_before_engine) {
  std::FILE* f = std::fopen(a.summary.c_str(), "w");
  if (!f) return;
  std::fprintf(f,
               "{\"blob\": \"%s\", \"steps\": %lld, \"batch_size\": %lld, \"accuracy_before\": %.6f, "
               "\"accuracy_after\": %.6f, \"last_loss\": %.6f, \"ms_per_step\": %.3f, \"cpu_ms_per_step\": %.3f, "
               "\"peak_rss_bytes\": %lld, \"rss_before_engine_bytes\": %lld}\n",
               a.blob.c_str(), static_cast<long long>(a.steps), static_cast<long long>(batch), t.accuracy_before,
               t.accuracy_after, static_cast<double>(t.last_loss), 1e3 * t.train_wall_s / static_cast<double>(a.steps),
               1e3 * t.train_cpu_s / static_cast<double>(a.steps), static_cast<long long>(peak_rss_bytes()),
               static_cast<long long>(rss_before_engine));
  std::fclose(f);
}

int run(const Args& a) {
  const int64_t rss_before_engine = current_rss_bytes();
  pock::Engine::Options options;
  options.num_threads = static_cast<int>(a.threads);
  options.backend = a.backend;  // empty: the kernels the blob chose
  auto engine = pock::Engine::open(a.blob, options);
  if (!engine.is_ok()) return fail(a.blob, engine.status());
  if (!engine->can_train()) {
    return fail(a.blob, pock::Status(pock::Code::kInvalidArgument, "compiled without a recipe: it cannot train"));
  }
  auto feed = BatchFeed::create(*engine, InputNames{});
  if (!feed.is_ok()) return fail(a.blob, feed.status());
  auto train = SampleFiles::open(a.train, feed->sample_floats());
  if (!train.is_ok()) return fail("--train", train.status());
  auto test = SampleFiles::open(a.test, feed->sample_floats());
  if (!test.is_ok()) return fail("--test", test.status());
  std::FILE* log = a.log.empty() ? nullptr : std::fopen(a.log.c_str(), "w");

  Totals t;
  auto evaluate = [&](int64_t step) -> pock::Result<double> {
    POCK_ASSIGN_OR_RETURN(double acc, accuracy(*engine, *feed, *test));
    if (log) std::fprintf(log, "{\"step\": %lld, \"test_accuracy\": %.6f}\n", static_cast<long long>(step), acc);
    std::printf("  step %4lld  held-out accuracy %.1f%%\n", static_cast<long long>(step), 100 * acc);
    std::fflush(stdout);
    return acc;
  };
  auto before = evaluate(0);
  if (!before.is_ok()) return fail("evaluation", before.status());
  t.accuracy_before = t.accuracy_after = *before;

  Shuffler shuffler(train->size(), static_cast<uint64_t>(a.seed));
  double loss_sum = 0;
  int64_t loss_count = 0;
  for (int64_t step = 1; step <= a.steps; ++step) {
    pock::Status fed = feed->feed(*engine, *train, shuffler.next(feed->batch_size()), true);
    if (!fed.is_ok()) return fail("reading a batch", fed);
    const double wall0 = wall_seconds(), cpu0 = process_cpu_seconds();
    auto loss = engine->train_step();
    const double wall = wall_seconds() - wall0, cpu = process_cpu_seconds() - cpu0;
    if (!loss.is_ok()) return fail("step " + std::to_string(step), loss.status());
    t.train_wall_s += wall;
    t.train_cpu_s += cpu;
    t.last_loss = *loss;
    loss_sum += *loss;
    ++loss_count;
    if (log) {
      std::fprintf(log, "{\"step\": %lld, \"loss\": %.6f, \"ms\": %.3f, \"cpu_ms\": %.3f}\n",
                   static_cast<long long>(step), static_cast<double>(*loss), 1e3 * wall, 1e3 * cpu);
    }
    const bool last = step == a.steps;
    if ((a.eval_every > 0 && step % a.eval_every == 0) || last) {
      std::printf("  step %4lld  mean loss %.4f  %.0f ms/step (%.0f ms CPU)\n", static_cast<long long>(step),
                  loss_sum / static_cast<double>(loss_count), 1e3 * t.train_wall_s / static_cast<double>(step),
                  1e3 * t.train_cpu_s / static_cast<double>(step));
      loss_sum = 0;
      loss_count = 0;
      auto acc = evaluate(step);
      if (!acc.is_ok()) return fail("evaluation", acc.status());
      t.accuracy_after = *acc;
    }
  }
  if (log) std::fclose(log);
  if (!a.checkpoint.empty()) {
    pock::Status saved = engine->save_checkpoint(a.checkpoint);
    if (!saved.is_ok()) return fail("checkpoint", saved);
  }
  if (!a.summary.empty()) write_summary(a, t, feed->batch_size(), rss_before_engine);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Args args;
  if (!parse_args(argc, argv, &args)) {
    std::fprintf(stderr,
                 "usage: %s BLOB --train PREFIX --test PREFIX --steps N [--eval-every K] [--log LOG.jsonl]\n"
                 "          [--summary SUMMARY.json] [--checkpoint CKPT] [--threads T] [--seed S] [--backend NAME]\n",
                 argv[0]);
    return 2;
  }
  return run(args);
}
