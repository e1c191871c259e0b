// Numbers for people: "1.23 MB", "4.56 GFLOP", "0.123 ms".
#pragma once
#include <cstdint>
#include <string>

#include "pock/status.hpp"

namespace pock::tools {

std::string format_bytes(uint64_t bytes);        // decimal units: 1 MB = 1e6 bytes, as pockc compile prints
std::string format_flops(double flops);          // "512 FLOP", "1.20 MFLOP", "3.40 GFLOP"
std::string format_ms(double milliseconds);      // "0.123 ms"

// "4096", "512K", "300M", "2G" (binary: K = 1024) -> bytes; the error names `what`.
Result<uint64_t> parse_bytes(const std::string& text, const std::string& what);

}  // namespace pock::tools
