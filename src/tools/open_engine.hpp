// Opening a blob with the engine options that infer and train share (--threads, --backend).
#pragma once
#include <string>
#include <vector>

#include "pock/engine.hpp"
#include "tools/args.hpp"

namespace pock::tools {

std::vector<OptionSpec> engine_option_specs();
Result<Engine> open_engine(const std::string& path, const ParsedArgs& args);

}  // namespace pock::tools
