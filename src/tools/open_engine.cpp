#include "tools/open_engine.hpp"

#include <cstdio>

#include "tools/units.hpp"

namespace pock::tools {

OptionSpec backend_plugin_option() {
  return {"--backend-plugin", "LIB.so",
          "load a backend plugin: a path, or a file name found in POCK_BACKEND_PATH (repeatable)", true};
}

std::vector<OptionSpec> engine_option_specs() {
  return {{"--threads", "N", "worker threads (0: one per core)"},
          {"--backend", "NAME", "preferred kernel backend (cpu, ref, cuda in a CUDA build, or a plugin's name); default: as compiled"},
          backend_plugin_option(),
          memory_budget_option()};
}

OptionSpec memory_budget_option() {
  return {"--memory-budget", "SIZE", "refuse a blob whose planned memory exceeds SIZE (bytes, or 512M, 2G)"};
}

Result<uint64_t> memory_budget(const ParsedArgs& args) {
  if (!args.has("--memory-budget")) return uint64_t{0};
  return parse_bytes(args.get("--memory-budget"), "--memory-budget");
}

Result<Engine> open_engine(const std::string& path, const ParsedArgs& args) {
  Engine::Options options;
  POCK_ASSIGN_OR_RETURN(int64_t threads, args.get_int("--threads", 0));
  if (threads < 0) return Status(Code::kInvalidArgument, "--threads must be >= 0");
  options.num_threads = static_cast<int>(threads);
  options.backend = args.get("--backend");
  options.backend_plugins = args.all("--backend-plugin");
  POCK_ASSIGN_OR_RETURN(options.memory_budget_bytes, memory_budget(args));
  auto engine = Engine::open(path, options);
  if (!engine.is_ok()) return Status(engine.status().code(), path + ": " + engine.status().message());
  // A plugin that failed to load does not stop the engine; say so rather than run silently without it.
  for (const BackendInfo& b : engine->backends()) {
    if (!b.status.is_ok()) std::fprintf(stderr, "warning: %s\n", b.status.message().c_str());
  }
  return engine;
}

Status resume_if_asked(Engine& engine, const ParsedArgs& args) {
  if (!args.has("--resume")) return Status::ok();
  const std::string ckpt = args.get("--resume");
  Status s = engine.load_checkpoint(ckpt);
  if (!s.is_ok()) return Status(s.code(), "--resume " + ckpt + ": " + s.message());
  return Status::ok();
}

}  // namespace pock::tools
