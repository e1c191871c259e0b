#include "process_stats.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <ctime>

namespace personalize {

int64_t peak_rss_bytes() {
  rusage usage{};
  if (getrusage(RUSAGE_SELF, &usage) != 0) return 0;
#if defined(__APPLE__)
  return static_cast<int64_t>(usage.ru_maxrss);  // macOS reports bytes
#else
  return static_cast<int64_t>(usage.ru_maxrss) * 1024;  // Linux reports kilobytes
#endif
}

int64_t current_rss_bytes() {
  std::FILE* f = std::fopen("/proc/self/statm", "r");
  if (!f) return 0;
  long long pages_total = 0, pages_resident = 0;
  const bool ok = std::fscanf(f, "%lld %lld", &pages_total, &pages_resident) == 2;
  std::fclose(f);
  return ok ? pages_resident * static_cast<int64_t>(sysconf(_SC_PAGESIZE)) : 0;
}

double process_cpu_seconds() {
  timespec ts{};
  if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) != 0) return 0;
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

double wall_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace personalize
