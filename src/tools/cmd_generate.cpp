// pockc generate: text generation with a causal language model's blob (pock/generate.hpp).
#include <chrono>
#include <cstdio>
#include <optional>
#include <sstream>

#include "pock/generate.hpp"
#include "pock/tokenizer.hpp"
#include "tools/commands.hpp"
#include "tools/open_engine.hpp"

namespace pock::tools {
namespace {

Result<std::vector<int64_t>> parse_ids(const std::string& text) {
  std::vector<int64_t> ids;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    try {
      size_t used = 0;
      ids.push_back(std::stoll(item, &used));
      if (used != item.size()) throw std::invalid_argument(item);
    } catch (const std::exception&) {
      return Status(Code::kInvalidArgument, "--prompt-ids: '" + item + "' is not a token id");
    }
  }
  return ids;
}

Result<double> parse_number(const ParsedArgs& args, const std::string& name, double fallback) {
  if (!args.has(name)) return fallback;
  try {
    size_t used = 0;
    const std::string v = args.get(name);
    const double d = std::stod(v, &used);
    if (used == v.size()) return d;
  } catch (const std::exception&) {
  }
  return Status(Code::kInvalidArgument, name + " takes a number, not '" + args.get(name) + "'");
}

Status run_generate(const ParsedArgs& args) {
  // Text in and out through the model's own tokenizer, or ids as they are.
  std::optional<Tokenizer> tokenizer;
  if (args.has("--gguf")) {
    POCK_ASSIGN_OR_RETURN(Tokenizer t, Tokenizer::from_gguf_file(args.get("--gguf")));
    tokenizer.emplace(std::move(t));
  }
  if (args.has("--prompt") == args.has("--prompt-ids")) return Status(Code::kInvalidArgument, "give one of --prompt TEXT and --prompt-ids IDS");
  if (args.has("--prompt") && !tokenizer) return Status(Code::kInvalidArgument, "--prompt needs --gguf MODEL.gguf for the tokenizer");
  std::vector<int64_t> prompt;
  if (tokenizer) {
    EncodeOptions encode;
    encode.add_bos = tokenizer->add_bos_by_default();
    if (args.has("--prompt")) {
      POCK_ASSIGN_OR_RETURN(prompt, tokenizer->encode(args.get("--prompt"), encode));
    }
  }
  if (args.has("--prompt-ids")) {
    POCK_ASSIGN_OR_RETURN(prompt, parse_ids(args.get("--prompt-ids")));
  }
  SamplingOptions o;
  POCK_ASSIGN_OR_RETURN(o.max_new_tokens, args.get_int("--max-new-tokens", 32));
  POCK_ASSIGN_OR_RETURN(o.temperature, parse_number(args, "--temperature", 0.0));
  POCK_ASSIGN_OR_RETURN(o.top_p, parse_number(args, "--top-p", 1.0));
  POCK_ASSIGN_OR_RETURN(const int64_t seed, args.get_int("--seed", 0));
  o.seed = static_cast<uint64_t>(seed);
  o.no_cache = args.has("--no-cache");
  if (tokenizer && tokenizer->eos_id() >= 0) o.stop_tokens.push_back(tokenizer->eos_id());
  for (const std::string& s : args.all("--stop")) {
    POCK_ASSIGN_OR_RETURN(const std::vector<int64_t> ids, parse_ids(s));
    o.stop_tokens.insert(o.stop_tokens.end(), ids.begin(), ids.end());
  }
  POCK_ASSIGN_OR_RETURN(Engine engine, open_engine(args.positionals[0], args));
  if (args.has("--checkpoint")) POCK_RETURN_IF_ERROR(engine.load_checkpoint(args.get("--checkpoint")));
  const auto start = std::chrono::steady_clock::now();
  POCK_ASSIGN_OR_RETURN(const std::vector<int64_t> tokens, generate(engine, prompt, o));
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const size_t made = tokens.size() - prompt.size();
  std::fprintf(stderr, "%zu prompt + %zu new tokens in %.3f s: %.1f new tokens/s (%s)\n", prompt.size(), made, seconds,
               seconds > 0 ? double(made) / seconds : 0.0,
               engine.has_function("decode") && !o.no_cache ? "KV cache" : "a forward over the window per token");
  if (args.has("--prompt")) {
    POCK_ASSIGN_OR_RETURN(const std::string text, tokenizer->decode(tokens));
    std::printf("%s\n", text.c_str());
    return Status::ok();
  }
  for (size_t i = 0; i < tokens.size(); ++i) std::printf("%s%lld", i ? "," : "", static_cast<long long>(tokens[i]));
  std::printf("\n");
  return Status::ok();
}

}  // namespace

const CommandEntry& generate_command() {
  static const CommandEntry entry = [] {
    CommandEntry e{
        Command{"generate",
                "OUT.pock (--prompt-ids ID,... | --gguf MODEL.gguf --prompt TEXT) [--max-new-tokens N] [--temperature T] [--top-p P] [--seed S]",
                "Generate tokens with a causal language model's blob; prints prompt + new token ids.",
                "The blob takes input_ids [batch, seq] and gives logits [batch, seq, vocab] (a .gguf model,\n"
                "compiled with or without a recipe). A blob compiled with --kv-cache N decodes one position\n"
                "per token through its KV cache (at most N positions); otherwise each token runs the\n"
                "inference function over the last `seq` tokens. Temperature 0 (the default) is greedy; otherwise tokens are\n"
                "drawn from softmax(logits / T), within the top-p nucleus, reproducibly from --seed.\n"
                "--checkpoint loads trained weights first.",
                {"BLOB"},
                {{"--prompt-ids", "ID,ID,...", "the prompt's token ids (output: ids)"},
                 {"--prompt", "TEXT", "the prompt as text, tokenized by --gguf's tokenizer (output: text)"},
                 {"--gguf", "MODEL.gguf", "the model file whose tokenizer reads --prompt; its end-of-text token stops generation"},
                 {"--max-new-tokens", "N", "tokens to generate (default 32)"},
                 {"--temperature", "T", "0: greedy (default)"},
                 {"--top-p", "P", "nucleus sampling mass (default 1)"},
                 {"--seed", "S", "seed of the draws (default 0)"},
                 {"--stop", "ID,...", "stop after generating one of these ids", true},
                 {"--checkpoint", "CKPT", "load a checkpoint (trained weights) first"},
                 {"--no-cache", "", "run the inference function per token even if the blob has a decode function"}}},
        run_generate};
    for (const OptionSpec& o : engine_option_specs()) e.spec.options.push_back(o);
    return e;
  }();
  return entry;
}

}  // namespace pock::tools
