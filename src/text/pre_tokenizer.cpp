#define PCRE2_CODE_UNIT_WIDTH 8
#include "text/pre_tokenizer.hpp"

#include <pcre2.h>

namespace pock::text {
namespace {

// GPT-2's split (Hugging Face's ByteLevel pre-tokenizer with use_regex).
constexpr const char* kGpt2 = R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";
// LLaMA-3's, from its tokenizer.json.
constexpr const char* kLlama3 =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

// PCRE2's \s keeps U+180E (MONGOLIAN VOWEL SEPARATOR), which Unicode 6.3 took out of
// White_Space; the references' \s is White_Space. The expressions above are written as the
// references write them and rewritten so when compiled.
std::string with_white_space_property(const char* pattern) {
  std::string out;
  for (const char* p = pattern; *p; ++p) {
    if (p[0] == '\\' && (p[1] == 's' || p[1] == 'S')) {
      out += p[1] == 's' ? "\\p{White_Space}" : "\\P{White_Space}";
      ++p;
    } else if (p[0] == '\\' && p[1]) {
      out += *p++;
      out += *p;
    } else {
      out += *p;
    }
  }
  return out;
}

struct Spec {
  const char* name;
  std::vector<const char*> expressions;
  bool ignore_merges;
};

const std::vector<Spec>& specs() {
  static const std::vector<Spec> all = {
      // SmolLM2's tokenizer.json: Digits(individual_digits) then ByteLevel (llama.cpp: "smollm").
      {"smollm", {R"(\p{N})", kGpt2}, false},
      {"gpt-2", {kGpt2}, false},
      {"gpt2", {kGpt2}, false},
      {"llama-bpe", {kLlama3}, true},
      {"llama3", {kLlama3}, true},
      {"llama-v3", {kLlama3}, true},
      // What llama.cpp splits with when a file names no pre-tokenizer (older conversions).
      {"default", {R"([\p{P}\$\+<=>\^~\|]+)", kGpt2, R"(\p{N}+)", R"([0-9][0-9][0-9])"}, false},
  };
  return all;
}

}  // namespace

// A compiled expression (JIT-compiled where PCRE2 supports it), shared by copies of a PreTokenizer.
class Regex {
 public:
  static Result<std::shared_ptr<const Regex>> compile(const char* pattern) {
    int error = 0;
    PCRE2_SIZE at = 0;
    const std::string expression = with_white_space_property(pattern);
    pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(expression.data()), expression.size(), PCRE2_UTF | PCRE2_UCP,
                                     &error, &at, nullptr);
    if (!code) {
      PCRE2_UCHAR message[256];
      pcre2_get_error_message(error, message, sizeof(message));
      return Status(Code::kInternal, std::string("pre-tokenizer expression does not compile: ") +
                                         reinterpret_cast<const char*>(message));
    }
    (void)pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);  // without JIT support the interpreter runs it
    return std::shared_ptr<const Regex>(new Regex(code));
  }
  ~Regex() { pcre2_code_free(code_); }
  Regex(const Regex&) = delete;
  Regex& operator=(const Regex&) = delete;

  // The first match in subject[from, size): its [begin, end), or begin == npos for none.
  Result<std::pair<size_t, size_t>> find(std::string_view subject, size_t from) const {
    // One match block per thread, for every expression: only the whole match is read.
    thread_local std::unique_ptr<pcre2_match_data, decltype(&pcre2_match_data_free)> data(pcre2_match_data_create(1, nullptr),
                                                                                           &pcre2_match_data_free);
    if (!data) return Status(Code::kOutOfMemory, "pre-tokenizer: no memory for a match");
    const int rc = pcre2_match(code_, reinterpret_cast<PCRE2_SPTR>(subject.data()), subject.size(), from, PCRE2_NO_UTF_CHECK,
                               data.get(), nullptr);
    if (rc == PCRE2_ERROR_NOMATCH) return std::pair<size_t, size_t>{std::string_view::npos, 0};
    if (rc < 0) {
      PCRE2_UCHAR message[256];
      pcre2_get_error_message(rc, message, sizeof(message));
      return Status(Code::kInternal, std::string("pre-tokenizer: ") + reinterpret_cast<const char*>(message));
    }
    const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(data.get());
    return std::pair<size_t, size_t>{ovector[0], ovector[1]};
  }

 private:
  explicit Regex(pcre2_code* code) : code_(code) {}
  pcre2_code* code_;
};

Result<PreTokenizer> PreTokenizer::create(std::string_view name) {
  std::string known;
  for (const Spec& spec : specs()) {
    known += std::string(known.empty() ? "" : ", ") + spec.name;
    if (name != spec.name) continue;
    PreTokenizer p;
    p.name_ = spec.name;
    p.ignore_merges_ = spec.ignore_merges;
    for (const char* expression : spec.expressions) {
      POCK_ASSIGN_OR_RETURN(std::shared_ptr<const Regex> regex, Regex::compile(expression));
      p.steps_.push_back(std::move(regex));
    }
    return p;
  }
  return Status(Code::kUnsupportedOp, "pre-tokenizer '" + std::string(name) + "' is not supported (supported: " + known + ")");
}

Status PreTokenizer::split(std::string_view text, std::vector<std::pair<size_t, size_t>>& pieces) const {
  const size_t first = pieces.size();
  if (!text.empty()) pieces.emplace_back(0, text.size());
  std::vector<std::pair<size_t, size_t>> next;
  for (const std::shared_ptr<const Regex>& step : steps_) {
    next.clear();
    for (size_t p = first; p < pieces.size(); ++p) {
      // Each piece is matched on its own: a lookahead sees no further than the piece.
      const auto [begin, end] = pieces[p];
      const std::string_view piece = text.substr(begin, end - begin);
      size_t at = 0;
      while (at < piece.size()) {
        POCK_ASSIGN_OR_RETURN(const auto match, step->find(piece, at));
        if (match.first == std::string_view::npos) break;
        // None of the expressions matches the empty string (it would never advance).
        if (match.second == match.first) return Status(Code::kInternal, "pre-tokenizer '" + name_ + "' matched nothing");
        if (match.first > at) next.emplace_back(begin + at, begin + match.first);  // the text between matches
        next.emplace_back(begin + match.first, begin + match.second);
        at = match.second;
      }
      if (at < piece.size()) next.emplace_back(begin + at, end);
    }
    pieces.resize(first);
    pieces.insert(pieces.end(), next.begin(), next.end());
  }
  return Status::ok();
}

}  // namespace pock::text
