// Command-line parsing for pockc subcommands: declared options, positional arguments, --help
// text generated from the declarations, and errors that say what to type instead.
#pragma once
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "pock/status.hpp"

namespace pock::tools {

struct OptionSpec {
  OptionSpec(std::string name_, std::string value_name_, std::string help_, bool repeatable_ = false,
             bool required_ = false, std::string short_name_ = "")
      : name(std::move(name_)), value_name(std::move(value_name_)), help(std::move(help_)),
        repeatable(repeatable_), required(required_), short_name(std::move(short_name_)) {}
  std::string name;         // "--recipe"
  std::string value_name;   // "RECIPE.json"; empty for a flag
  std::string help;
  bool repeatable = false;
  bool required = false;
  std::string short_name;   // "-o"
};

struct Command {
  std::string name;         // "compile"
  std::string usage;        // "MODEL.onnx --recipe RECIPE.json -o OUT.pock"
  std::string summary;      // one line for `pockc --help`
  std::string details;      // extra paragraphs for `pockc NAME --help`
  std::vector<std::string> positionals;  // names, all required
  std::vector<OptionSpec> options;
  std::string help_text() const;
};

struct ParsedArgs {
  std::vector<std::string> positionals;
  std::map<std::string, std::vector<std::string>> values;  // option name -> values (flags: "1")
  bool help = false;

  bool has(const std::string& name) const { return values.count(name) > 0; }
  std::string get(const std::string& name, const std::string& fallback = "") const;
  const std::vector<std::string>& all(const std::string& name) const;
  Result<int64_t> get_int(const std::string& name, int64_t fallback) const;
};

Result<ParsedArgs> parse_args(const Command& command, int argc, char** argv);

}  // namespace pock::tools
