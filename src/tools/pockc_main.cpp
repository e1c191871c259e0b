// pockc: the command line over the compiler and the runtime.
#include <cstdio>
#include <exception>
#include <new>
#include <string>
#include <vector>

#include "tools/commands.hpp"

namespace {

using pock::tools::CommandEntry;

std::vector<const CommandEntry*> all_commands() {
  return {&pock::tools::compile_command(), &pock::tools::infer_command(), &pock::tools::train_command(),
          &pock::tools::inspect_command(), &pock::tools::tune_command(), &pock::tools::bench_command(),
          &pock::tools::export_command(), &pock::tools::generate_command(),
          &pock::tools::tokenize_command()};
}

void print_overview() {
  std::printf("usage: pockc COMMAND [ARGS]\n\nPockEngine's compiler and trainer.\n\ncommands:\n");
  for (const CommandEntry* c : all_commands()) std::printf("  %-10s %s\n", c->spec.name.c_str(), c->spec.summary.c_str());
  std::printf("\n'pockc COMMAND --help' describes one command.\n");
}

int dispatch(int argc, char** argv) {
  if (argc < 2) {
    print_overview();
    return 2;
  }
  const std::string name = argv[1];
  if (name == "-h" || name == "--help" || name == "help") {
    if (name == "help" && argc > 2) {
      for (const CommandEntry* c : all_commands()) {
        if (c->spec.name == argv[2]) {
          std::printf("%s", c->spec.help_text().c_str());
          return 0;
        }
      }
    }
    print_overview();
    return 0;
  }
  for (const CommandEntry* c : all_commands()) {
    if (c->spec.name != name) continue;
    auto args = pock::tools::parse_args(c->spec, argc - 2, argv + 2);
    if (!args.is_ok()) {
      std::fprintf(stderr, "pockc %s: %s\n", name.c_str(), args.status().message().c_str());
      return 2;
    }
    if (args->help) {
      std::printf("%s", c->spec.help_text().c_str());
      return 0;
    }
    const pock::Status s = c->run(args.value());
    if (!s.is_ok()) {
      std::fprintf(stderr, "pockc %s: %s\n", name.c_str(), s.to_string().c_str());
      return 1;
    }
    return 0;
  }
  std::fprintf(stderr, "pockc: unknown command '%s'; run 'pockc --help' for the list\n", name.c_str());
  return 2;
}

}  // namespace

// Commands report failures as a Status; an exception that still escapes one (a library's, or a
// bug of ours) becomes an error message and exit status 1 here, never std::terminate.
int main(int argc, char** argv) {
  const char* command = argc > 1 ? argv[1] : "";
  try {
    return dispatch(argc, argv);
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "pockc %s: out of memory\n", command);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "pockc %s: unexpected error: %s\n", command, e.what());
  } catch (...) {
    std::fprintf(stderr, "pockc %s: unexpected error of unknown type\n", command);
  }
  return 1;
}
