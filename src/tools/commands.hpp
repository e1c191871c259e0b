// The pockc subcommands: each file cmd_<name>.cpp declares its options and runs it.
#pragma once
#include "tools/args.hpp"

namespace pock::tools {

struct CommandEntry {
  Command spec;
  Status (*run)(const ParsedArgs& args);
};

const CommandEntry& compile_command();
const CommandEntry& infer_command();
const CommandEntry& train_command();
const CommandEntry& inspect_command();
const CommandEntry& tune_command();
const CommandEntry& bench_command();
const CommandEntry& export_command();
const CommandEntry& generate_command();
const CommandEntry& tokenize_command();

}  // namespace pock::tools
