// Summaries of repeated timings: the median for "typical", p90 for "how bad it gets".
#pragma once
#include <vector>

namespace pock::tools {

// Nearest-rank percentile (p in [0, 100]) of `samples`; 0 when empty. Takes a copy to sort.
double percentile(std::vector<double> samples, double p);
inline double median(const std::vector<double>& samples) { return percentile(samples, 50); }
double mean(const std::vector<double>& samples);

}  // namespace pock::tools
