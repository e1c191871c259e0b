#include "tools/timing_stats.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace pock::tools {

double percentile(std::vector<double> samples, double p) {
  if (samples.empty()) return 0;
  std::sort(samples.begin(), samples.end());
  const double rank = std::ceil(p / 100.0 * static_cast<double>(samples.size()));
  const size_t index = rank < 1 ? 0 : std::min(samples.size() - 1, static_cast<size_t>(rank) - 1);
  return samples[index];
}

double mean(const std::vector<double>& samples) {
  if (samples.empty()) return 0;
  return std::accumulate(samples.begin(), samples.end(), 0.0) / static_cast<double>(samples.size());
}

}  // namespace pock::tools
