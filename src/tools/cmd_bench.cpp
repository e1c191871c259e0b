// pockc bench: time a blob's steps on this machine (median, p90) and, with --per-op, where each
// step's time goes. The benchmark suite calls it with --json.
#include <chrono>
#include <cstdio>

#include "runtime/engine_core.hpp"
#include "tools/open_engine.hpp"
#include "tools/bench_report.hpp"
#include "tools/commands.hpp"
#include "tools/synthetic_data.hpp"
#include "tools/units.hpp"

namespace pock::tools {
namespace {

using Json = nlohmann::ordered_json;
using Clock = std::chrono::steady_clock;

struct BenchSettings {
  int64_t steps = 20, warmup = 3, top = 10, threads = 0;
  std::string function;  // "" : train if the blob has it, else infer
};

Result<BenchSettings> bench_settings(const ParsedArgs& args) {
  BenchSettings s;
  POCK_ASSIGN_OR_RETURN(s.steps, args.get_int("--steps", s.steps));
  POCK_ASSIGN_OR_RETURN(s.warmup, args.get_int("--warmup", s.warmup));
  POCK_ASSIGN_OR_RETURN(s.top, args.get_int("--top", s.top));
  POCK_ASSIGN_OR_RETURN(s.threads, args.get_int("--threads", s.threads));
  if (s.steps < 1) return Status(Code::kInvalidArgument, "--steps must be at least 1");
  if (s.warmup < 0 || s.top < 0 || s.threads < 0) {
    return Status(Code::kInvalidArgument, "--warmup, --top and --threads must be >= 0");
  }
  s.function = args.get("--function");
  return s;
}

// Synthetic inputs (docs/pockc.md): the same every step, so every step does the same work.
Status fill_inputs(EngineCore& engine, const BlobContents& blob, const FunctionSpec& fn) {
  for (int32_t id : fn.inputs) {
    const TensorSpec& t = blob.spec.tensors[static_cast<size_t>(id)];
    void* data = engine.tensor_data(t.name);
    if (!data) return Status(Code::kInternal, "input '" + t.name + "' has no buffer");
    fill_synthetic(t.dtype, data, t.nbytes, 0xBE7C0000u + static_cast<uint64_t>(id));
  }
  return Status::ok();
}

Status run_once(EngineCore& engine, const std::string& function) {
  float loss = 0;
  if (function == "train") return engine.train_step(&loss);
  if (function == "eval") return engine.eval_step(&loss);
  return engine.infer();
}

void print_text(const Json& r) {
  const Json& s = r["step_ms"];
  std::printf("%s: %s, %lld step(s) after %lld warm-up, threads %d%s\n", r["blob"].get<std::string>().c_str(),
              r["function"].get<std::string>().c_str(), r["steps"].get<long long>(), r["warmup"].get<long long>(),
              r["threads"].get<int>(), r["threads"].get<int>() == 0 ? " (one per core)" : "");
  std::printf("step: median %s, p90 %s, mean %s, min %s, max %s\n", format_ms(s["median"].get<double>()).c_str(),
              format_ms(s["p90"].get<double>()).c_str(), format_ms(s["mean"].get<double>()).c_str(),
              format_ms(s["min"].get<double>()).c_str(), format_ms(s["max"].get<double>()).c_str());
  if (!r.contains("per_op")) return;
  const Json& p = r["per_op"];
  std::printf("per op, mean per step: %s in ops (%.1f%% of the step), %s outside them\n",
              format_ms(p["ops_ms"].get<double>()).c_str(), 100 * p["ops_share"].get<double>(),
              format_ms(p["outside_ops_ms"].get<double>()).c_str());
  for (const Json& phase : p["phases"]) {
    std::printf("  %-10s %12s %5.1f%%  %lld ops\n", phase["phase"].get<std::string>().c_str(),
                format_ms(phase["ms"].get<double>()).c_str(), 100 * phase["share"].get<double>(), phase["ops"].get<long long>());
    for (const Json& k : phase["kinds"]) {
      std::printf("    %-24s x%-4lld %12s %5.1f%%\n", k["op"].get<std::string>().c_str(), k["count"].get<long long>(),
                  format_ms(k["ms"].get<double>()).c_str(), 100 * k["share"].get<double>());
    }
  }
  if (p["top"].empty()) return;
  std::printf("slowest ops:\n");
  for (const Json& o : p["top"]) {
    std::printf("  %12s %5.1f%%  %-9s %-24s '%s' on %s\n", format_ms(o["ms"].get<double>()).c_str(),
                100 * o["share"].get<double>(), o["phase"].get<std::string>().c_str(), o["op"].get<std::string>().c_str(),
                o["name"].get<std::string>().c_str(), o["backend"].get<std::string>().c_str());
  }
}

Status run_bench(const ParsedArgs& args) {
  const std::string& path = args.positionals[0];
  POCK_ASSIGN_OR_RETURN(BenchSettings settings, bench_settings(args));
  POCK_ASSIGN_OR_RETURN(BlobContents blob, read_blob_contents(path));
  const FunctionSpec* fn = settings.function.empty() ? blob.main_function() : blob.function(settings.function);
  if (!fn) return Status(Code::kNotFound, path + " has no function '" + settings.function + "' (train, infer or eval)");

  EngineOptions options;
  options.num_threads = static_cast<int>(settings.threads);
  options.backend = args.get("--backend");
  options.backend_plugins = args.all("--backend-plugin");
  auto opened = EngineCore::open_file(path, options);
  if (!opened.is_ok()) return Status(opened.status().code(), path + ": " + opened.status().message());
  EngineCore& engine = *opened.value();
  POCK_RETURN_IF_ERROR(fill_inputs(engine, blob, *fn));

  BenchRun run;
  run.function = fn->name;
  run.threads = options.num_threads;
  run.warmup = settings.warmup;
  run.op_backends = engine.op_backends();
  const bool per_op = args.has("--per-op");
  if (per_op) {
    engine.set_op_timing(true);
    run.op_total_ns.assign(fn->ops.size(), 0);
  }
  run.step_ms.reserve(static_cast<size_t>(settings.steps));
  for (int64_t k = 0; k < settings.warmup + settings.steps; ++k) {
    const Clock::time_point start = Clock::now();
    const Status s = run_once(engine, fn->name);
    const double ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    if (!s.is_ok()) return Status(s.code(), fn->name + " step " + std::to_string(k + 1) + ": " + s.message());
    if (k < settings.warmup) continue;
    run.step_ms.push_back(ms);
    if (!per_op) continue;
    for (size_t i = 0; i < fn->ops.size(); ++i) run.op_total_ns[i] += engine.op_time_ns()[fn->ops[i]];
  }
  const Json report = bench_report(path, blob, *fn, run, static_cast<size_t>(settings.top));
  if (args.has("--json")) std::printf("%s\n", report.dump(1).c_str());
  else print_text(report);
  return Status::ok();
}

}  // namespace

const CommandEntry& bench_command() {
  static const CommandEntry entry{
      Command{"bench",
              "OUT.pock [--steps N] [--warmup K] [--per-op] [--top N] [--threads T] [--json]",
              "Time a blob's steps on this machine: median and p90, and per op with --per-op.",
              "Runs K untimed and N timed steps of the train function (infer when the blob has no\n"
              "recipe; --function picks another) on synthetic inputs: fixed pseudo-random floats in\n"
              "[-1, 1), integer inputs (labels, token ids) 0. A train step includes the engine's\n"
              "rollback snapshot, as in 'pockc train'. --per-op times every op and reports mean\n"
              "milliseconds per step by phase, by op kind and for the --top slowest ops.",
              {"BLOB"},
              {{"--steps", "N", "timed steps (default 20)"},
               {"--warmup", "K", "untimed steps first (default 3)"},
               {"--per-op", "", "time every op (two clock reads per op; a device op is waited for)"},
               {"--top", "N", "slowest ops to list with --per-op (default 10)"},
               {"--threads", "T", "worker threads (0: one per core)"},
               {"--backend", "NAME", "preferred kernel backend (cpu, ref, cuda in a CUDA build, or a plugin's name); default: as compiled"},
               backend_plugin_option(),
               {"--function", "NAME", "train, infer or eval (default: train if the blob has it)"},
               {"--json", "", "print the report as JSON"}}},
      run_bench};
  return entry;
}

}  // namespace pock::tools
