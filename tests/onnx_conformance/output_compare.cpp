#include "output_compare.hpp"

#include <cmath>
#include <cstdio>

#include "frontend/onnx/host_tensor.hpp"

namespace pock::conformance {
namespace {

// |a - e| <= atol + rtol * |e| (numpy's assert_allclose: asymmetric, relative to the expected),
// NaN matches NaN and an infinity matches the same infinity.
bool close(double a, double e) {
  if (std::isnan(a) || std::isnan(e)) return std::isnan(a) && std::isnan(e);
  if (std::isinf(a) || std::isinf(e)) return a == e;
  return std::fabs(a - e) <= kAtol + kRtol * std::fabs(e);
}

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.7g", v);
  return buf;
}

}  // namespace

std::optional<Mismatch> compare_output(const onnx_import::DecodedTensor& expected, const onnx_import::DecodedTensor& actual) {
  if (actual.dtype != expected.dtype) {
    return Mismatch{"wrong dtype", std::string("pock ") + dtype_name(actual.dtype) + ", expected " + dtype_name(expected.dtype)};
  }
  if (actual.shape != expected.shape) {
    return Mismatch{"wrong shape", "pock " + shape_str(actual.shape) + ", expected " + shape_str(expected.shape)};
  }
  auto want = onnx_import::host_tensor_from_bytes(expected.dtype, expected.shape, expected.bytes);
  auto got = onnx_import::host_tensor_from_bytes(actual.dtype, actual.shape, actual.bytes);
  if (!want.is_ok()) return Mismatch{"values", "expected data: " + want.status().message()};
  if (!got.is_ok()) return Mismatch{"values", "pock's data: " + got.status().message()};
  int64_t bad = 0, worst = -1;
  double worst_err = -1;
  for (int64_t k = 0; k < want->size(); ++k) {
    const double a = got->as_double(k), e = want->as_double(k);
    if (close(a, e)) continue;
    ++bad;
    const double err = std::isfinite(a - e) ? std::fabs(a - e) : INFINITY;
    if (err > worst_err || worst < 0) worst_err = err, worst = k;
  }
  if (bad == 0) return std::nullopt;
  return Mismatch{"values", "max abs err " + number(worst_err) + " (" + std::to_string(bad) + " of " +
                                std::to_string(want->size()) + " off; at " + std::to_string(worst) + ": pock " +
                                number(got->as_double(worst)) + ", expected " + number(want->as_double(worst)) + ")"};
}

}  // namespace pock::conformance
