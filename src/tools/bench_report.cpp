#include "tools/bench_report.hpp"

#include <algorithm>
#include <map>

#include "tools/timing_stats.hpp"

namespace pock::tools {
namespace {

using Json = nlohmann::ordered_json;

Json step_summary(const std::vector<double>& ms) {
  Json j;
  j["median"] = median(ms);
  j["p90"] = percentile(ms, 90);
  j["mean"] = mean(ms);
  j["min"] = ms.empty() ? 0.0 : *std::min_element(ms.begin(), ms.end());
  j["max"] = ms.empty() ? 0.0 : *std::max_element(ms.begin(), ms.end());
  return j;
}

// Every op's mean time per step, grouped by phase and by op kind within a phase, plus the top ops.
Json per_op_summary(const BlobContents& blob, const FunctionSpec& fn, const BenchRun& run, size_t top) {
  const double steps = static_cast<double>(std::max<size_t>(run.step_ms.size(), 1));
  std::vector<double> op_ms(fn.ops.size());
  double ops_ms = 0;
  for (size_t k = 0; k < fn.ops.size(); ++k) {
    op_ms[k] = static_cast<double>(run.op_total_ns[k]) / 1e6 / steps;
    ops_ms += op_ms[k];
  }
  const double step_mean = mean(run.step_ms);
  auto share = [&](double ms) { return step_mean > 0 ? ms / step_mean : 0.0; };

  Json phases = Json::array();
  for (Phase phase : kAllPhases) {
    std::map<std::string, std::pair<int64_t, double>> kinds;  // op kind -> (count, ms)
    double phase_ms = 0;
    int64_t count = 0;
    for (size_t k = 0; k < fn.ops.size(); ++k) {
      if (blob.op_phases[fn.ops[k]] != phase) continue;
      auto& kind = kinds[blob.spec.ops[fn.ops[k]].op];
      ++kind.first;
      kind.second += op_ms[k];
      phase_ms += op_ms[k];
      ++count;
    }
    if (count == 0) continue;
    std::vector<std::pair<std::string, std::pair<int64_t, double>>> sorted(kinds.begin(), kinds.end());
    std::stable_sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.second.second > b.second.second; });
    Json kind_list = Json::array();
    for (const auto& [op, stats] : sorted) kind_list.push_back({{"op", op}, {"count", stats.first}, {"ms", stats.second}, {"share", share(stats.second)}});
    phases.push_back({{"phase", phase_name(phase)}, {"ops", count}, {"ms", phase_ms}, {"share", share(phase_ms)}, {"kinds", kind_list}});
  }

  std::vector<size_t> order(fn.ops.size());
  for (size_t k = 0; k < order.size(); ++k) order[k] = k;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return op_ms[a] > op_ms[b]; });
  Json top_ops = Json::array();
  for (size_t r = 0; r < order.size() && r < top; ++r) {
    const uint32_t index = fn.ops[order[r]];
    const OpSpec& op = blob.spec.ops[index];
    top_ops.push_back({{"index", index},
                       {"op", op.op},
                       {"name", op.name},
                       {"phase", phase_name(blob.op_phases[index])},
                       {"backend", index < run.op_backends.size() ? run.op_backends[index] : ""},
                       {"ms", op_ms[order[r]]},
                       {"share", share(op_ms[order[r]])}});
  }
  Json j;
  j["ops_ms"] = ops_ms;                    // sum over ops of their mean time per step
  j["outside_ops_ms"] = step_mean - ops_ms;  // rollback snapshot, loop, clock reads
  j["ops_share"] = share(ops_ms);
  j["phases"] = std::move(phases);
  j["top"] = std::move(top_ops);
  return j;
}

}  // namespace

nlohmann::ordered_json bench_report(const std::string& path, const BlobContents& blob, const FunctionSpec& fn,
                                    const BenchRun& run, size_t top) {
  Json j;
  j["blob"] = path;
  j["function"] = run.function;
  j["threads"] = run.threads;
  j["warmup"] = run.warmup;
  j["steps"] = run.step_ms.size();
  j["step_ms"] = step_summary(run.step_ms);
  j["samples_ms"] = run.step_ms;
  if (!run.op_total_ns.empty()) j["per_op"] = per_op_summary(blob, fn, run, top);
  return j;
}

}  // namespace pock::tools
