// pockc tokenize: a GGUF model's tokenizer on text (pock/tokenizer.hpp), or ids back to text.
#include <cstdio>
#include <fstream>
#include <sstream>

#include "pock/tokenizer.hpp"
#include "tools/commands.hpp"

namespace pock::tools {
namespace {

Status run_tokenize(const ParsedArgs& args) {
  POCK_ASSIGN_OR_RETURN(const Tokenizer tok, Tokenizer::from_gguf_file(args.positionals[0]));
  if (args.has("--decode")) {
    std::vector<int64_t> ids;
    std::stringstream in(args.get("--decode"));
    std::string item;
    while (std::getline(in, item, ',')) {
      try {
        ids.push_back(std::stoll(item));
      } catch (const std::exception&) {
        return Status(Code::kInvalidArgument, "--decode: '" + item + "' is not a token id");
      }
    }
    POCK_ASSIGN_OR_RETURN(const std::string text, tok.decode(ids));
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::printf("\n");
    return Status::ok();
  }
  // One line of ids per line of input: --file FILE, or --text TEXT as a single line.
  std::vector<std::string> lines;
  if (args.has("--file")) {
    std::ifstream in(args.get("--file"), std::ios::binary);
    if (!in) return Status(Code::kIo, "cannot read '" + args.get("--file") + "'");
    for (std::string line; std::getline(in, line);) lines.push_back(line);
  } else {
    lines.push_back(args.get("--text"));
  }
  EncodeOptions options;
  options.add_bos = args.has("--bos");
  options.parse_special = !args.has("--no-special");
  for (const std::string& line : lines) {
    POCK_ASSIGN_OR_RETURN(const std::vector<int64_t> ids, tok.encode(line, options));
    for (size_t i = 0; i < ids.size(); ++i) std::printf("%s%lld", i ? "," : "", static_cast<long long>(ids[i]));
    std::printf("\n");
  }
  return Status::ok();
}

}  // namespace

const CommandEntry& tokenize_command() {
  static const CommandEntry entry{
      Command{"tokenize",
              "MODEL.gguf (--text TEXT | --file FILE | --decode ID,ID,...)",
              "Run a GGUF model's tokenizer: text to token ids, or ids back to text.",
              "Byte-level BPE models (tokenizer.ggml.model gpt2: SmolLM2, GPT-2). With --file, each line of\n"
              "the file (without its newline) gives one line of comma-separated ids.",
              {"MODEL.gguf"},
              {{"--text", "TEXT", "the text to encode"},
               {"--file", "FILE", "encode each line of FILE"},
               {"--decode", "ID,ID,...", "decode these ids to text"},
               {"--bos", "", "prepend the BOS token"},
               {"--no-special", "", "treat special tokens' text as plain text"}}},
      run_tokenize};
  return entry;
}

}  // namespace pock::tools
