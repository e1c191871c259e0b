#include "tools/args.hpp"

#include <charconv>

namespace pock::tools {

std::string Command::help_text() const {
  std::string s = "usage: pockc " + name + " " + usage + "\n\n" + summary + "\n";
  if (!details.empty()) s += "\n" + details + "\n";
  if (!options.empty()) s += "\noptions:\n";
  for (const OptionSpec& o : options) {
    std::string left = "  " + (o.short_name.empty() ? "" : o.short_name + ", ") + o.name;
    if (!o.value_name.empty()) left += " " + o.value_name;
    if (left.size() < 30) left.append(30 - left.size(), ' ');
    else left += "\n" + std::string(30, ' ');
    s += left + o.help + (o.required ? " (required)" : "") + (o.repeatable ? " (repeatable)" : "") + "\n";
  }
  s += "  -h, --help                  this text\n";
  return s;
}

std::string ParsedArgs::get(const std::string& name, const std::string& fallback) const {
  auto it = values.find(name);
  return it == values.end() || it->second.empty() ? fallback : it->second.back();
}

const std::vector<std::string>& ParsedArgs::all(const std::string& name) const {
  static const std::vector<std::string> none;
  auto it = values.find(name);
  return it == values.end() ? none : it->second;
}

Result<int64_t> ParsedArgs::get_int(const std::string& name, int64_t fallback) const {
  if (!has(name)) return fallback;
  const std::string s = get(name);
  int64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) {
    return Status(Code::kInvalidArgument, name + " expects an integer, got '" + s + "'");
  }
  return v;
}

Result<ParsedArgs> parse_args(const Command& command, int argc, char** argv) {
  ParsedArgs out;
  const std::string see = "; see 'pockc " + command.name + " --help'";
  for (int i = 0; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "-h" || arg == "--help") {
      out.help = true;
      return out;
    }
    if (arg.size() > 1 && arg[0] == '-') {
      std::string value;
      bool inline_value = false;
      if (const size_t eq = arg.find('='); arg.rfind("--", 0) == 0 && eq != std::string::npos) {
        value = arg.substr(eq + 1);
        arg = arg.substr(0, eq);
        inline_value = true;
      }
      const OptionSpec* spec = nullptr;
      for (const OptionSpec& o : command.options) {
        if (o.name == arg || (!o.short_name.empty() && o.short_name == arg)) spec = &o;
      }
      if (!spec) return Status(Code::kInvalidArgument, "unknown option '" + arg + "'" + see);
      if (spec->value_name.empty()) {
        if (inline_value) return Status(Code::kInvalidArgument, spec->name + " takes no value" + see);
        value = "1";
      } else if (!inline_value) {
        if (i + 1 >= argc) return Status(Code::kInvalidArgument, spec->name + " needs a value (" + spec->value_name + ")" + see);
        value = argv[++i];
      }
      auto& slot = out.values[spec->name];
      if (!slot.empty() && !spec->repeatable) {
        return Status(Code::kInvalidArgument, spec->name + " is given twice" + see);
      }
      slot.push_back(value);
      continue;
    }
    out.positionals.push_back(arg);
  }
  if (out.positionals.size() != command.positionals.size()) {
    std::string expected;
    for (const auto& p : command.positionals) expected += (expected.empty() ? "" : " ") + p;
    return Status(Code::kInvalidArgument, "expected " + (expected.empty() ? std::string("no positional arguments") : expected) +
                                              ", got " + std::to_string(out.positionals.size()) + " positional argument(s)" + see);
  }
  for (const OptionSpec& o : command.options) {
    if (o.required && !out.has(o.name)) {
      return Status(Code::kInvalidArgument, "missing " + o.name + " " + o.value_name + see);
    }
  }
  return out;
}

}  // namespace pock::tools
