// Test support: one group's value under ONNX's definition of each reduction, written plainly in
// double, for the kernel tests and the ONNX import tests to compare against.
#pragma once
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace pock::test {

inline double onnx_reduce_group(const std::string& op, const std::vector<double>& v) {
  double sum = 0.0, squares = 0.0, abs = 0.0, prod = 1.0, exps = 0.0;
  double max = -std::numeric_limits<double>::infinity(), min = std::numeric_limits<double>::infinity();
  for (double e : v) {
    sum += e;
    squares += e * e;
    abs += std::fabs(e);
    prod *= e;
    exps += std::exp(e);
    max = std::max(max, e);
    min = std::min(min, e);
  }
  if (op == "ReduceSum") return sum;
  if (op == "ReduceMean") return sum / static_cast<double>(v.size());
  if (op == "ReduceMax") return max;
  if (op == "ReduceMin") return min;
  if (op == "ReduceProd") return prod;
  if (op == "ReduceSumSquare") return squares;
  if (op == "ReduceL1") return abs;
  if (op == "ReduceL2") return std::sqrt(squares);
  if (op == "ReduceLogSum") return std::log(sum);
  if (op == "ReduceLogSumExp") return std::log(exps);  // callers keep values small enough not to overflow
  return std::numeric_limits<double>::quiet_NaN();
}

}  // namespace pock::test
