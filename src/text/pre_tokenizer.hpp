// Splits text into the words BPE merges within, as the GPT-2 regex does:
//   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
// (the first alternative that matches at each position, each as long as it goes), optionally
// after isolating every \p{N} code point ("smollm", llama.cpp's name for SmolLM's split, the
// Digits(individual_digits) step of its Hugging Face tokenizer). Bytes that are not valid UTF-8
// count as one "other" character each and stay as they are.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace pock::text {

struct PreTokenizerOptions {
  bool isolate_digits = false;
};

// Byte ranges [begin, end) of `text`, in order, covering all of it.
std::vector<std::pair<size_t, size_t>> pre_tokenize(std::string_view text, const PreTokenizerOptions& options);

}  // namespace pock::text
