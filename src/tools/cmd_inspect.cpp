// pockc inspect: what a blob holds and what running it costs, without running it.
#include <cstdio>

#include "tools/open_engine.hpp"
#include "tools/commands.hpp"
#include "tools/inspect_report.hpp"
#include "tools/lora_weights.hpp"
#include "tools/units.hpp"

namespace pock::tools {
namespace {

using Json = nlohmann::ordered_json;

std::string counts_text(const Json& counts) {
  std::string s;
  for (const auto& [name, n] : counts.items()) {
    if (!s.empty()) s += ", ";
    s += name + " x" + n.dump();
  }
  return s;
}

std::string shape_text(const Json& dtype, const Json& shape) {
  std::string s = dtype.get<std::string>() + "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ",";
    s += shape[i].dump();
  }
  return s + "]";
}

void print_functions(const Json& r) {
  std::printf("functions:\n");
  for (const Json& f : r["functions"]) {
    std::printf("  %-6s %4lld ops, arena %s: %s\n", f["name"].get<std::string>().c_str(), f["ops"].get<long long>(),
                format_bytes(f["arena_bytes"].get<uint64_t>()).c_str(), counts_text(f["op_counts"]).c_str());
  }
}

void print_flops(const Json& r) {
  if (r["flops"].empty()) return;
  std::string parts;
  for (const auto& [phase, n] : r["flops"].items()) {
    if (!parts.empty()) parts += ", ";
    parts += phase + " " + format_flops(n.get<double>());
  }
  std::printf("FLOPs per %s step: %s\n", r["step_function"].get<std::string>().c_str(), parts.c_str());
}

void print_parameters(const Json& p) {
  std::printf("parameters: %lld (%lld trainable), %lld elements, %lld of them train\n", p["count"].get<long long>(),
              p["trainable_count"].get<long long>(), p["elements"].get<long long>(),
              p["trainable_elements"].get<long long>());
  for (const Json& t : p["list"]) {
    if (!t["trainable"].get<bool>()) continue;
    const long long channels = t["channels"].get<long long>(), rows = t["rows"].get<long long>();
    const std::string which = channels == rows ? "all" : "channels 0.." + std::to_string(channels - 1) + " of " + std::to_string(rows);
    std::printf("  %-40s %-18s %s\n", t["name"].get<std::string>().c_str(), shape_text(t["dtype"], t["shape"]).c_str(),
                which.c_str());
  }
}

void print_memory(const Json& m) {
  auto bytes = [&](const char* key) { return m.contains(key) ? format_bytes(m[key].get<uint64_t>()) : std::string("?"); };
  std::printf("memory: weights %s, trainable %s, optimizer state %s, saved activations %s, arena peak %s "
              "(lower bound %s), persistent %s, kernel workspace here %s\n",
              bytes("weights_bytes").c_str(), bytes("trainable_bytes").c_str(), bytes("optimizer_state_bytes").c_str(),
              bytes("saved_activation_bytes").c_str(), bytes("arena_peak_bytes").c_str(),
              bytes("arena_lower_bound_bytes").c_str(), bytes("persistent_bytes").c_str(),
              bytes("workspace_bytes").c_str());
  const Json& q = m.value("block_quantized_weights", Json::object());
  if (q.value("tensors", 0) > 0) {
    std::printf("  block-quantized frozen weights: %d tensors, %s instead of %s as f32 (saves %s)\n", q["tensors"].get<int>(),
                format_bytes(q["bytes"].get<uint64_t>()).c_str(), format_bytes(q["f32_bytes"].get<uint64_t>()).c_str(),
                format_bytes(q["saved_bytes"].get<uint64_t>()).c_str());
  }
}

void print_backends(const Json& r) {
  const Json& b = r["backends"];
  std::printf("backends: the blob prefers %s", counts_text(b["preferred"]).c_str());
  const Json& choice = b["choice"];
  if (choice.contains("profiled_ops")) {
    std::string by;
    auto add = [&](const char* key, const std::string& what) {
      const long long n = choice[key].get<long long>();
      if (n == 0) return;
      if (!by.empty()) by += ", ";
      by += what + " for " + std::to_string(n);
    };
    add("profiled_ops", "the profile " + choice.value("profile", ""));
    add("requested_ops", "--backend");
    add("heuristic_ops", "the heuristic");
    add("undecided_ops", "nothing (only the requested device backend claimed them)");
    std::printf(", chosen by %s", by.c_str());
  }
  std::printf("\n");
  if (!b["bind_error"].is_null()) {
    std::printf("  this machine cannot open the blob: %s\n", b["bind_error"].get<std::string>().c_str());
    return;
  }
  std::printf("  this machine binds %s; %lld op(s) elsewhere than preferred\n", counts_text(b["bound"]).c_str(),
              b["bound_elsewhere"].get<long long>());
  for (const Json& loaded : b["loaded"]) {
    const std::string error = loaded.value("error", "");
    const std::string library = loaded.value("library", "");
    std::printf("  backend %s%s: %s\n", loaded.value("name", "").c_str(), library.empty() ? "" : (" (" + library + ")").c_str(),
                error.empty() ? "loaded" : error.c_str());
  }
  if (b.contains("memory_spaces")) {
    for (const Json& s : b["memory_spaces"]) {
      std::printf("  memory of %s: arena %lld bytes, persistent %lld bytes\n", s.value("backend", "").c_str(),
                  s.value("arena_bytes", 0LL), s.value("persistent_bytes", 0LL));
    }
  }
}

void print_ops(const Json& r) {
  std::printf("%5s %-6s %-9s %-24s %12s %-8s %-8s %s\n", "index", "fn", "phase", "op", "FLOPs", "prefers", "binds", "name");
  for (const Json& o : r["ops"]) {
    const std::string algorithm = o.contains("cpu_algorithm") ? " (cpu " + o["cpu_algorithm"].get<std::string>() + ")" : "";
    std::printf("%5lld %-6s %-9s %-24s %12lld %-8s %-8s %s%s\n", o["index"].get<long long>(),
                o["function"].get<std::string>().c_str(), o["phase"].get<std::string>().c_str(),
                o["op"].get<std::string>().c_str(), o["flops"].get<long long>(), o["preferred"].get<std::string>().c_str(),
                o["bound"].is_null() ? "-" : o["bound"].get<std::string>().c_str(), o["name"].get<std::string>().c_str(),
                algorithm.c_str());
  }
}

Status run_inspect(const ParsedArgs& args) {
  const std::string& path = args.positionals[0];
  POCK_ASSIGN_OR_RETURN(BlobContents blob, read_blob_contents(path));
  const Json report = inspect_report(path, blob, bind_blob(path, args.get("--backend"), args.all("--backend-plugin")));
  if (args.has("--json")) {
    std::printf("%s\n", report.dump(1).c_str());
    return Status::ok();
  }
  std::printf("%s (%s)\n", path.c_str(), report["producer"].get<std::string>().c_str());
  for (const Json& problem : report["metadata_problems"]) {
    std::printf("warning: %s; not shown\n", problem.get<std::string>().c_str());
  }
  print_functions(report);
  print_flops(report);
  print_parameters(report["parameters"]);
  if (report.contains("lora")) std::printf("%s\n", lora_summary(report["lora"]).c_str());
  print_memory(report["memory"]);
  print_backends(report);
  if (args.has("--ops")) print_ops(report);
  return Status::ok();
}

}  // namespace

const CommandEntry& inspect_command() {
  static const CommandEntry entry{
      Command{"inspect",
              "OUT.pock [--json] [--ops] [--backend NAME]",
              "Show a blob's ops, FLOPs per phase, trainable parameters, memory and backends.",
              "FLOPs count a multiply-add as 2 (docs/pockc.md lists the formula per op kind) and are\n"
              "split by phase: forward, loss, backward, optimizer. Memory is the compiler's report,\n"
              "stored in the blob. Backends: the one the blob prefers per op (compile --profile, or\n"
              "the heuristic) and the one an engine binds on this machine.",
              {"BLOB"},
              {{"--json", "", "print the whole report as JSON (every op included)"},
               {"--ops", "", "list every op: function, phase, FLOPs, preferred and bound backend"},
               {"--backend", "NAME", "bind as an engine opened with this backend would"},
               backend_plugin_option()}},
      run_inspect};
  return entry;
}

}  // namespace pock::tools
