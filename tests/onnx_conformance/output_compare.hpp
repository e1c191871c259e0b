// Compares one output of pock with the expected value as onnx's own backend test runner does
// (onnx/backend/test/runner: same dtype, same shape, np.testing.assert_allclose with rtol 1e-3,
// atol 1e-7, NaN equal to NaN).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "frontend/onnx/proto_reading.hpp"

namespace pock::conformance {

constexpr double kRtol = 1e-3;
constexpr double kAtol = 1e-7;

struct Mismatch {
  std::string kind;    // "wrong dtype", "wrong shape", "values"
  std::string detail;  // what differs, with the numbers
};

// nullopt when `actual` (pock's dtype, shape and bytes) matches `expected` within the tolerance.
std::optional<Mismatch> compare_output(const onnx_import::DecodedTensor& expected, const onnx_import::DecodedTensor& actual);

}  // namespace pock::conformance
