#include "tools/progress.hpp"

#include <unistd.h>

#include <cstdio>
#include <string>

namespace pock::tools {
namespace {

std::string clock_text(double seconds) {
  const long s = static_cast<long>(seconds + 0.5);
  char buf[32];
  if (s >= 3600) std::snprintf(buf, sizeof buf, "%ld:%02ld:%02ld", s / 3600, s / 60 % 60, s % 60);
  else std::snprintf(buf, sizeof buf, "%ld:%02ld", s / 60, s % 60);
  return buf;
}

}  // namespace

Progress::Progress(int64_t first_step, int64_t total_steps)
    : first_(first_step), total_(total_steps), tty_(isatty(STDOUT_FILENO) != 0), start_(std::chrono::steady_clock::now()) {}

void Progress::step(int64_t done, float loss) {
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const long long global = static_cast<long long>(first_ + done);
  if (!tty_) {
    std::printf("step %lld loss %.6g\n", global, static_cast<double>(loss));
    std::fflush(stdout);
    return;
  }
  constexpr int kWidth = 30;
  const int filled = total_ > 0 ? static_cast<int>(kWidth * done / total_) : kWidth;
  const double rate = elapsed > 0 ? static_cast<double>(done) / elapsed : 0.0;
  const double eta = rate > 0 ? static_cast<double>(total_ - done) / rate : 0.0;
  std::printf("\r[%s%s] %lld/%lld  loss %.6g  %.2f step/s  ETA %s   ", std::string(static_cast<size_t>(filled), '#').c_str(),
              std::string(static_cast<size_t>(kWidth - filled), '.').c_str(), static_cast<long long>(done),
              static_cast<long long>(total_), static_cast<double>(loss), rate, clock_text(eta).c_str());
  std::fflush(stdout);
}

void Progress::finish() {
  if (tty_) std::printf("\n");
  std::fflush(stdout);
}

}  // namespace pock::tools
