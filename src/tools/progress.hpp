// Per-step training output: one line per step when stdout is a pipe or file (logs stay greppable),
// a live progress bar with rate and ETA when it is a terminal.
#pragma once
#include <chrono>
#include <cstdint>

namespace pock::tools {

class Progress {
 public:
  Progress(int64_t first_step, int64_t total_steps);
  void step(int64_t done, float loss);  // `done` steps of this run finished
  void finish();

 private:
  int64_t first_, total_;
  bool tty_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace pock::tools
