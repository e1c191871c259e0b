// What `pockc bench` measured, as JSON: step times (median, p90, ...) and, with per-op timing,
// where a step's time goes — per phase, per op kind within a phase, and the slowest ops.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tools/blob_contents.hpp"

namespace pock::tools {

struct BenchRun {
  std::string function;              // "train", "infer", "eval"
  int threads = 0;
  int64_t warmup = 0;
  std::vector<double> step_ms;       // one per timed step
  // With per-op timing: total nanoseconds of each op of the function over the timed steps, in
  // the function's schedule order; empty without.
  std::vector<int64_t> op_total_ns;
  std::vector<std::string> op_backends;  // by op index: what the engine bound
};

nlohmann::ordered_json bench_report(const std::string& path, const BlobContents& blob, const FunctionSpec& fn,
                                    const BenchRun& run, size_t top);

}  // namespace pock::tools
