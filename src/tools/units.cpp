#include "tools/units.hpp"

#include <cstdio>

namespace pock::tools {
namespace {

std::string scaled(double value, const char* unit) {
  static const char* const prefixes[] = {"", "k", "M", "G", "T", "P"};
  int p = 0;
  while (value >= 1000.0 && p < 5) {
    value /= 1000.0;
    ++p;
  }
  char buf[48];
  if (p == 0) std::snprintf(buf, sizeof buf, "%.0f %s", value, unit);
  else std::snprintf(buf, sizeof buf, "%.2f %s%s", value, prefixes[p], unit);
  return buf;
}

}  // namespace

std::string format_bytes(uint64_t bytes) { return scaled(static_cast<double>(bytes), "B"); }

std::string format_flops(double flops) { return scaled(flops, "FLOP"); }

std::string format_ms(double milliseconds) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f ms", milliseconds);
  return buf;
}

}  // namespace pock::tools
