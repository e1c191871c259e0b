// Opening a blob with the engine options that infer and train share (--threads, --backend,
// --backend-plugin, --memory-budget).
#pragma once
#include <string>
#include <vector>

#include "pock/engine.hpp"
#include "tools/args.hpp"

namespace pock::tools {

std::vector<OptionSpec> engine_option_specs();
// --backend-plugin LIB (repeatable), taken by every command that compiles or opens a blob.
OptionSpec backend_plugin_option();
// --memory-budget SIZE, taken by compile too; 0 when absent.
OptionSpec memory_budget_option();
Result<uint64_t> memory_budget(const ParsedArgs& args);
Result<Engine> open_engine(const std::string& path, const ParsedArgs& args);
// --resume CKPT (train and infer): loads the checkpoint when given; the error names it.
Status resume_if_asked(Engine& engine, const ParsedArgs& args);

}  // namespace pock::tools
