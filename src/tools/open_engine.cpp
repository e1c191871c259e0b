#include "tools/open_engine.hpp"

#include <cstdio>

namespace pock::tools {

OptionSpec backend_plugin_option() {
  return {"--backend-plugin", "LIB.so",
          "load a backend plugin: a path, or a file name found in POCK_BACKEND_PATH (repeatable)", true};
}

std::vector<OptionSpec> engine_option_specs() {
  return {{"--threads", "N", "worker threads (0: one per core)"},
          {"--backend", "NAME", "preferred kernel backend (cpu, ref, or a plugin's name); default: as compiled"},
          backend_plugin_option()};
}

Result<Engine> open_engine(const std::string& path, const ParsedArgs& args) {
  Engine::Options options;
  POCK_ASSIGN_OR_RETURN(int64_t threads, args.get_int("--threads", 0));
  if (threads < 0) return Status(Code::kInvalidArgument, "--threads must be >= 0");
  options.num_threads = static_cast<int>(threads);
  options.backend = args.get("--backend");
  options.backend_plugins = args.all("--backend-plugin");
  auto engine = Engine::open(path, options);
  if (!engine.is_ok()) return Status(engine.status().code(), path + ": " + engine.status().message());
  // A plugin that failed to load does not stop the engine; say so rather than run silently without it.
  for (const BackendInfo& b : engine->backends()) {
    if (!b.status.is_ok()) std::fprintf(stderr, "warning: %s\n", b.status.message().c_str());
  }
  return engine;
}

}  // namespace pock::tools
