#include "models/params.hpp"
#include "ir/splitmix64.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

namespace pock::models {
namespace {

// FNV-1a: a stable hash of the parameter name (std::hash may differ between standard libraries).
uint64_t fnv1a(const std::string& s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

// Uniform in [0, 1) from the counter-based splitmix64 stream of `key`.
double uniform01(uint64_t key, uint64_t counter) {
  return unit_interval(splitmix64(key + counter * kSplitmixGamma));
}

int64_t count(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d < 0 ? 0 : d;
  return n;
}

}  // namespace

uint64_t Params::seed_for(const std::string& name) const { return splitmix64(seed_ ^ fnv1a(name)); }

std::vector<float> Params::normal_values(const std::string& name, int64_t count, double std) const {
  const uint64_t key = seed_for(name);
  std::vector<float> values(static_cast<size_t>(std::max<int64_t>(count, 0)));
  // Marsaglia's polar method: a point uniform in the unit disc gives two independent normals
  // with one log and no trigonometry (the large presets draw ~10^8 values).
  uint64_t counter = 0;
  for (size_t i = 0; i < values.size(); i += 2) {
    double u = 0, v = 0, s = 0;
    do {
      u = 2.0 * uniform01(key, counter++) - 1.0;
      v = 2.0 * uniform01(key, counter++) - 1.0;
      s = u * u + v * v;
    } while (s >= 1.0 || s == 0.0);
    const double factor = std * std::sqrt(-2.0 * std::log(s) / s);
    values[i] = static_cast<float>(u * factor);
    if (i + 1 < values.size()) values[i + 1] = static_cast<float>(v * factor);
  }
  return values;
}

TensorId Params::normal(const std::string& name, Shape shape, double std) {
  if (const TensorId id = existing(name); id != kNoTensor) return id;
  const std::vector<float> values = normal_values(name, count(shape), std);
  return b_.parameter(name, std::move(shape), values);
}

TensorId Params::uniform(const std::string& name, Shape shape, double bound) {
  if (const TensorId id = existing(name); id != kNoTensor) return id;
  return b_.parameter_uniform(name, std::move(shape), bound, seed_for(name));
}

TensorId Params::fill(const std::string& name, Shape shape, float value) {
  if (const TensorId id = existing(name); id != kNoTensor) return id;
  return b_.parameter_fill(name, std::move(shape), value);
}

TensorId Params::state(const std::string& name, Shape shape, float value) {
  const std::vector<float> values(static_cast<size_t>(count(shape)), value);
  return b_.state(name, std::move(shape), values);
}

}  // namespace pock::models
