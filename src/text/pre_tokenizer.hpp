// Pre-tokenization: the split of text into the words BPE merges within, named by the GGUF key
// tokenizer.ggml.pre. Each split is a list of regular expressions applied in turn: every piece
// the previous one left is cut into its matches and the text between them (Hugging Face's
// "Isolated" split, llama.cpp's regex_exprs). The expressions are the reference tokenizers' own,
// run by PCRE2 in Unicode mode (\p{L}, \p{N}, \s and lookahead as the references mean them).
#pragma once
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pock/status.hpp"

namespace pock::text {

class Regex;

class PreTokenizer {
 public:
  // "smollm", "gpt-2" (or "gpt2"), "llama-bpe" (or "llama3", "llama-v3") and "default";
  // another name is an error that lists these.
  static Result<PreTokenizer> create(std::string_view name);

  // Appends the byte ranges [begin, end) of the pieces of `text` (valid UTF-8), in order,
  // covering all of it.
  Status split(std::string_view text, std::vector<std::pair<size_t, size_t>>& pieces) const;

  const std::string& name() const { return name_; }
  // LLaMA-3's BPE takes a word that is a vocabulary token as it is, without merging.
  bool ignore_merges() const { return ignore_merges_; }

 private:
  std::string name_;
  std::vector<std::shared_ptr<const Regex>> steps_;
  bool ignore_merges_ = false;
};

}  // namespace pock::text
