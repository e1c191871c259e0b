// pockc tokenize: a GGUF model's tokenizer on text (pock/tokenizer.hpp), or ids back to text.
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <sstream>

#include "pock/tokenizer.hpp"
#include "tools/commands.hpp"

namespace pock::tools {
namespace {

Status run_decode(const Tokenizer& tok, const ParsedArgs& args) {
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
  DecodeOptions options;
  options.replace_invalid_utf8 = !args.has("--raw");
  options.skip_special = args.has("--skip-special");
  POCK_ASSIGN_OR_RETURN(const std::string text, tok.decode(ids, options));
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::printf("\n");
  return Status::ok();
}

// The texts to encode: --text TEXT, or the lines (or NUL-separated records) of --file FILE.
Result<std::vector<std::string>> input_texts(const ParsedArgs& args) {
  if (!args.has("--file")) return std::vector<std::string>{args.get("--text")};
  std::ifstream in(args.get("--file"), std::ios::binary);
  if (!in) return Status(Code::kIo, "cannot read '" + args.get("--file") + "'");
  const std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const char separator = args.has("--nul") ? '\0' : '\n';
  std::vector<std::string> texts;
  size_t from = 0;
  while (from < all.size()) {
    const size_t end = all.find(separator, from);
    if (end == std::string::npos) {
      texts.push_back(all.substr(from));
      break;
    }
    texts.push_back(all.substr(from, end - from));
    from = end + 1;
  }
  return texts;
}

Status run_tokenize(const ParsedArgs& args) {
  POCK_ASSIGN_OR_RETURN(const Tokenizer tok, Tokenizer::from_gguf_file(args.positionals[0]));
  if (args.has("--decode")) return run_decode(tok, args);
  POCK_ASSIGN_OR_RETURN(const std::vector<std::string> texts, input_texts(args));
  EncodeOptions options;
  options.add_bos = args.has("--bos");
  options.parse_special = !args.has("--no-special");
  std::vector<std::vector<int64_t>> all_ids;
  all_ids.reserve(texts.size());
  size_t tokens = 0, bytes = 0;
  const auto start = std::chrono::steady_clock::now();
  for (const std::string& text : texts) {
    POCK_ASSIGN_OR_RETURN(std::vector<int64_t> ids, tok.encode(text, options));
    tokens += ids.size();
    bytes += text.size();
    all_ids.push_back(std::move(ids));
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  for (const std::vector<int64_t>& ids : all_ids) {
    for (size_t i = 0; i < ids.size(); ++i) std::printf("%s%lld", i ? "," : "", static_cast<long long>(ids[i]));
    std::printf("\n");
  }
  if (args.has("--time")) {
    std::fprintf(stderr, "encoded %zu texts, %zu bytes, %zu tokens in %.4f s: %.0f tokens/s, %.2f MB/s (one thread)\n",
                 texts.size(), bytes, tokens, seconds, seconds > 0 ? static_cast<double>(tokens) / seconds : 0.0,
                 seconds > 0 ? static_cast<double>(bytes) / seconds / 1e6 : 0.0);
  }
  return Status::ok();
}

}  // namespace

const CommandEntry& tokenize_command() {
  static const CommandEntry entry{
      Command{"tokenize",
              "MODEL.gguf (--text TEXT | --file FILE | --decode ID,ID,...)",
              "Run a GGUF model's tokenizer: text to token ids, or ids back to text.",
              "Byte-level BPE models (tokenizer.ggml.model gpt2: SmolLM2, GPT-2, LLaMA-3). With --file, each\n"
              "line of the file (without its newline; with --nul, each NUL-separated record) gives one line\n"
              "of comma-separated ids.",
              {"MODEL.gguf"},
              {{"--text", "TEXT", "the text to encode"},
               {"--file", "FILE", "encode each line of FILE"},
               {"--nul", "", "with --file: texts are separated by NUL bytes, not newlines"},
               {"--decode", "ID,ID,...", "decode these ids to text"},
               {"--raw", "", "with --decode: the bytes as they are, without replacing invalid UTF-8"},
               {"--skip-special", "", "with --decode: leave control tokens out"},
               {"--bos", "", "prepend the BOS token"},
               {"--no-special", "", "treat control tokens' text as plain text"},
               {"--time", "", "print the encoding time and tokens/s to stderr"}}},
      run_tokenize};
  return entry;
}

}  // namespace pock::tools
