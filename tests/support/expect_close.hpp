// Test support: compares a kernel's f32 output with an expectation computed independently in
// double, and describes the first mismatches (empty string when everything agrees), so a failing
// CHECK(mismatches(...) == "") says where and by how much.
#pragma once
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "pock/compiler/ir.hpp"

namespace pock::test {

// |got - want| <= atol + rtol * |want|; NaN matches NaN and infinities must match exactly.
inline bool close_enough(double got, double want, double rtol, double atol) {
  if (std::isnan(want) || std::isnan(got)) return std::isnan(want) && std::isnan(got);
  if (std::isinf(want) || std::isinf(got)) return got == want;
  return std::fabs(got - want) <= atol + rtol * std::fabs(want);
}

inline std::string mismatches(const std::vector<float>& got, const std::vector<double>& want, double rtol = 1e-5,
                              double atol = 1e-6) {
  if (got.size() != want.size()) {
    return "size " + std::to_string(got.size()) + " != expected " + std::to_string(want.size());
  }
  std::string report;
  int shown = 0, total = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    if (close_enough(got[i], want[i], rtol, atol)) continue;
    ++total;
    if (shown++ < 5) report += "[" + std::to_string(i) + "] got " + std::to_string(got[i]) + " want " + std::to_string(want[i]) + "; ";
  }
  if (total) report += std::to_string(total) + " of " + std::to_string(got.size()) + " differ";
  return report;
}

// A random shape of `rank` dims, each in [lo, hi].
inline Shape random_shape(std::mt19937& gen, int rank, int64_t lo = 1, int64_t hi = 5) {
  std::uniform_int_distribution<int64_t> dist(lo, hi);
  Shape s(static_cast<size_t>(rank));
  for (int64_t& d : s) d = dist(gen);
  return s;
}

// Row-major multi-index of flat index `flat` in `shape`.
inline std::vector<int64_t> unravel(int64_t flat, const Shape& shape) {
  std::vector<int64_t> idx(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    idx[d] = shape[d] ? flat % shape[d] : 0;
    flat = shape[d] ? flat / shape[d] : 0;
  }
  return idx;
}

// Flat index into `in_shape` of the element that numpy broadcasting maps to output index `out_idx`.
inline int64_t broadcast_source(const std::vector<int64_t>& out_idx, const Shape& in_shape) {
  const size_t offset = out_idx.size() - in_shape.size();
  int64_t flat = 0;
  for (size_t d = 0; d < in_shape.size(); ++d) flat = flat * in_shape[d] + (in_shape[d] == 1 ? 0 : out_idx[offset + d]);
  return flat;
}

}  // namespace pock::test
