#include "tools/open_engine.hpp"

namespace pock::tools {

std::vector<OptionSpec> engine_option_specs() {
  return {{"--threads", "N", "worker threads (0: one per core)"},
          {"--backend", "NAME", "preferred kernel backend (ref, cpu, cuda); default: as compiled"}};
}

Result<Engine> open_engine(const std::string& path, const ParsedArgs& args) {
  Engine::Options options;
  POCK_ASSIGN_OR_RETURN(int64_t threads, args.get_int("--threads", 0));
  if (threads < 0) return Status(Code::kInvalidArgument, "--threads must be >= 0");
  options.num_threads = static_cast<int>(threads);
  options.backend = args.get("--backend");
  auto engine = Engine::open(path, options);
  if (!engine.is_ok()) return Status(engine.status().code(), path + ": " + engine.status().message());
  return engine;
}

}  // namespace pock::tools
