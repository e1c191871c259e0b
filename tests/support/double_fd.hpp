// Test support: central finite differences of a scalar function written in double. Gradient tests
// of backward kernels define the forward op in double here and differentiate L = sum(dy * y)
// numerically, so the expected gradient never comes from the code under test and float rounding
// does not blur it (h = 1e-5 in double leaves errors around 1e-10).
#pragma once
#include <vector>

namespace pock::test {

template <typename F>
std::vector<double> numeric_gradient(F&& loss, std::vector<double> at, double h = 1e-5) {
  std::vector<double> grad(at.size());
  for (size_t i = 0; i < at.size(); ++i) {
    const double saved = at[i];
    at[i] = saved + h;
    const double up = loss(at);
    at[i] = saved - h;
    const double down = loss(at);
    at[i] = saved;
    grad[i] = (up - down) / (2.0 * h);
  }
  return grad;
}

inline std::vector<double> to_double(const std::vector<float>& v) { return std::vector<double>(v.begin(), v.end()); }

inline std::vector<float> to_float(const std::vector<double>& v) {
  std::vector<float> out(v.size());
  for (size_t i = 0; i < v.size(); ++i) out[i] = static_cast<float>(v[i]);
  return out;
}

inline double weighted_sum(const std::vector<double>& weights, const std::vector<double>& values) {
  double s = 0.0;
  for (size_t i = 0; i < values.size(); ++i) s += weights[i] * values[i];
  return s;
}

}  // namespace pock::test
