#include "tools/units.hpp"

#include <charconv>
#include <cstdint>
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

Result<uint64_t> parse_bytes(const std::string& text, const std::string& what) {
  uint64_t value = 0;
  const char* p = text.data();
  const char* end = p + text.size();
  const auto [next, ec] = std::from_chars(p, end, value);
  int shift = 0;
  if (next < end) {
    switch (*next) {
      case 'K': case 'k': shift = 10; break;
      case 'M': case 'm': shift = 20; break;
      case 'G': case 'g': shift = 30; break;
      case 'T': case 't': shift = 40; break;
      default: shift = -1;
    }
  }
  const size_t suffix = next < end ? 1 : 0;
  if (ec != std::errc() || shift < 0 || next + suffix != end || value > (UINT64_MAX >> shift)) {
    return Status(Code::kInvalidArgument, what + " '" + text + "' is not a size (bytes, or with K, M, G, T)");
  }
  return value << shift;
}

}  // namespace pock::tools
