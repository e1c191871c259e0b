// pockc tune: measure every candidate backend's kernel for each distinct op of a blob on this
// machine, and the cpu backend's convolution algorithms for each distinct convolution, and write
// the profile that `pockc compile --profile` turns into per-op backend and algorithm choices.
#include <cstdio>
#include <map>
#include <unordered_map>

#include "compiler/backend_profile.hpp"
#include "blob/atomic_file.hpp"
#include "ir/conv_algorithm.hpp"
#include "tools/blob_contents.hpp"
#include "tools/commands.hpp"
#include "tools/conv_algorithm_timing.hpp"
#include "tools/op_timer.hpp"
#include "tools/open_engine.hpp"

namespace pock::tools {
namespace {

Result<OpTimerOptions> timer_options(const ParsedArgs& args) {
  OpTimerOptions o;
  POCK_ASSIGN_OR_RETURN(int64_t threads, args.get_int("--threads", 0));
  POCK_ASSIGN_OR_RETURN(int64_t repeats, args.get_int("--repeats", 5));
  POCK_ASSIGN_OR_RETURN(int64_t budget, args.get_int("--budget-ms", 200));
  if (threads < 0) return Status(Code::kInvalidArgument, "--threads must be >= 0");
  if (repeats < 1) return Status(Code::kInvalidArgument, "--repeats must be at least 1");
  if (budget < 0) return Status(Code::kInvalidArgument, "--budget-ms must be >= 0");
  o.threads = static_cast<int>(threads);
  o.repeats = static_cast<int>(repeats);
  o.budget_ms = static_cast<double>(budget);
  // One thread: its CPU time, which load from other processes does not inflate (wall-clock
  // medians of one layer varied 2x between runs on a machine shared with builds).
  o.cpu_time = o.threads == 1;
  return o;
}

Status run_tune(const ParsedArgs& args) {
  const std::string& path = args.positionals[0];
  const std::string out = args.get("--output");
  POCK_ASSIGN_OR_RETURN(OpTimerOptions options, timer_options(args));
  POCK_ASSIGN_OR_RETURN(BlobContents blob, read_blob_contents(path));
  const BackendSet set = BackendSet::open(args.all("--backend-plugin"));
  for (const BackendEntry& e : set.entries()) {
    if (!e.status.is_ok()) return e.status;  // a profile silently missing a backend would mislead compile
  }
  const std::vector<pock_backend_v1*>& backends = set.usable();

  BackendProfile profile;
  profile.threads = options.threads;
  profile.repeats = options.repeats;
  for (pock_backend_v1* b : backends) profile.backends.push_back(b->name);
  // Equal signatures (repeated layers) are measured once; the profile counts how many share it.
  std::unordered_map<std::string, size_t> entry_of;
  std::vector<size_t> first_op;
  for (size_t i = 0; i < blob.spec.ops.size(); ++i) {
    const std::string signature = op_signature(blob.spec, blob.spec.ops[i]);
    auto [it, added] = entry_of.emplace(signature, profile.ops.size());
    if (added) {
      ProfiledOp entry;
      entry.signature = signature;
      entry.op = blob.spec.ops[i].op;
      profile.ops.push_back(std::move(entry));
      first_op.push_back(i);
    }
    ++profile.ops[it->second].count;
  }
  pock_backend_v1* cpu = nullptr;
  for (pock_backend_v1* b : backends) if (std::string(b->name) == "cpu") cpu = b;
  std::map<std::string, int> wins, algorithm_wins;
  int failures = 0;
  for (size_t e = 0; e < profile.ops.size(); ++e) {
    ProfiledOp& entry = profile.ops[e];
    const OpSpec& op = blob.spec.ops[first_op[e]];
    auto times = time_op_on_backends(blob.spec, op, backends, options);
    if (!times.is_ok()) return Status(times.status().code(), op.op + " '" + op.name + "': " + times.status().message());
    for (const KernelTime& t : times.value()) {
      if (!t.ok) {
        entry.errors[t.backend] = t.error;
        ++failures;
        continue;
      }
      entry.timings.push_back({t.backend, t.median_us});
    }
    const BackendTiming* best = lowest_median(entry.timings);
    ++wins[best ? best->backend : "(none)"];
    std::vector<std::string> skipped;
    if (cpu && has_conv_algorithms(op.op)) {
      auto algorithms = time_cpu_conv_algorithms(blob.spec, op, cpu, options, &skipped);
      if (!algorithms.is_ok()) return Status(algorithms.status().code(), op.op + " '" + op.name + "': " + algorithms.status().message());
      entry.cpu_algorithms = std::move(algorithms.value());
      if (const BackendTiming* fastest = lowest_median(entry.cpu_algorithms)) ++algorithm_wins[fastest->backend];
    }
    if (args.has("--verbose")) {
      std::printf("%-60.60s", entry.signature.c_str());
      for (const BackendTiming& t : entry.timings) std::printf("  %s %.1f us", t.backend.c_str(), t.median_us);
      for (const auto& [backend, why] : entry.errors) std::printf("  %s failed: %s", backend.c_str(), why.c_str());
      for (const BackendTiming& t : entry.cpu_algorithms) std::printf("\n    cpu %s %.1f us", t.backend.c_str(), t.median_us);
      for (const std::string& why : skipped) std::printf("\n    cpu %s", why.c_str());
      std::printf("\n");
    }
  }
  const std::string text = backend_profile_json(profile);
  POCK_RETURN_IF_ERROR(write_file_atomic(out, text.data(), text.size()));
  std::printf("tuned %zu distinct ops (%zu in all) of %s; fastest:", profile.ops.size(), blob.spec.ops.size(), path.c_str());
  for (const auto& [backend, n] : wins) std::printf(" %s x%d", backend.c_str(), n);
  if (failures) std::printf("; %d kernel run(s) failed (recorded under \"errors\")", failures);
  if (!algorithm_wins.empty()) {
    std::printf("\ncpu convolution algorithms, fastest:");
    for (const auto& [algorithm, n] : algorithm_wins) std::printf(" %s x%d", algorithm.c_str(), n);
  }
  std::printf("\nwrote %s; use it with 'pockc compile MODEL ... --profile %s'\n", out.c_str(), out.c_str());
  // The layout pass's channels-last convolutions have one cpu way; their NCHW forms were not timed.
  int nhwc = 0;
  for (const OpSpec& op : blob.spec.ops) nhwc += op.op == "Conv2d" && op.attrs.get_string("layout", "NCHW") == "NHWC";
  if (nhwc > 0) {
    std::printf("note: %d convolution(s) of this blob are channels-last, where only XNNPACK runs them; tune a blob "
                "compiled with --no-layout to time every algorithm on them (docs/pockc.md, Layout choice)\n",
                nhwc);
  }
  return Status::ok();
}

}  // namespace

const CommandEntry& tune_command() {
  static const CommandEntry entry{
      Command{"tune",
              "OUT.pock -o PROFILE.json [--threads N] [--repeats N] [--budget-ms MS] [--verbose]",
              "Time every backend's kernel for each op of a blob on this machine; write a profile.",
              "Each distinct op (type, dtypes, shapes, constness, attributes) runs alone on its own\n"
              "buffers, once untimed and then up to --repeats times on every backend that claims it;\n"
              "the profile keeps the median per backend. Each convolution also runs on the cpu\n"
              "backend with every algorithm that can run it (im2col, winograd, xnnpack, depthwise, pointwise).\n"
              "'pockc compile ... --profile PROFILE.json' then records the fastest backend of each\n"
              "measured op, and of each convolution the fastest cpu algorithm, in the blob. Run it on\n"
              "the device that will train, with the thread count it will use.",
              {"BLOB"},
              {{"--output", "PROFILE.json", "where to write the profile", false, true, "-o"},
               {"--threads", "N", "threads each kernel may use (0: one per core)"},
               {"--repeats", "N", "timed runs per op and backend (default 5)"},
               {"--budget-ms", "MS", "stop repeating an op on a backend after this long (default 200)"},
               {"--verbose", "", "print every op's times"},
               backend_plugin_option()}},
      run_tune};
  return entry;
}

}  // namespace pock::tools
