// The tokenizer.ggml.* metadata of a GGUF file, read and checked: every value of the type and
// range the tokenizer needs, or an error naming the key.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "frontend/gguf/gguf_file.hpp"
#include "pock/status.hpp"

namespace pock::text {

// llama.cpp's token types (tokenizer.ggml.token_type).
enum TokenType : int32_t { kNormal = 1, kUnknown = 2, kControl = 3, kUserDefined = 4, kUnused = 5, kByte = 6 };

struct GgufVocabulary {
  std::string model;  // tokenizer.ggml.model: "gpt2" (byte-level BPE), "llama" (SentencePiece), ...
  std::string pre;    // tokenizer.ggml.pre; "default" when absent
  std::vector<std::string> tokens;
  std::vector<int32_t> types;  // one per token; all kNormal when the file has none
  std::vector<std::string> merges;
  int64_t bos = -1, eos = -1, unknown = -1, padding = -1;  // -1: none
  bool add_bos = false;
};

Result<GgufVocabulary> read_gguf_vocabulary(const gguf::File& file);

}  // namespace pock::text
