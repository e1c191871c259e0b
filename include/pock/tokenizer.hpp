// Text to token ids and back for language models read from GGUF files: the byte-level BPE of
// the GPT-2 family (tokenizer.ggml.model "gpt2": SmolLM2, GPT-2, Qwen-style vocabularies with
// the GPT-2 split), from the file's vocabulary, merges and special tokens. Equal token for token
// to the model's Hugging Face tokenizer (tests/text/).
//
//   POCK_ASSIGN_OR_RETURN(pock::Tokenizer tok, pock::Tokenizer::from_gguf_file("model.gguf"));
//   POCK_ASSIGN_OR_RETURN(std::vector<int64_t> ids, tok.encode("Hello, world"));
//   std::string text = tok.decode(ids);
//
// Special tokens (control and user-defined ones, "<|im_start|>") written in the text become their
// ids unless EncodeOptions::parse_special is off. Bytes that are not valid UTF-8 are encoded as
// their byte tokens and decode back to the same bytes; a byte whose token the vocabulary lacks
// (SmolLM2 lacks a few) becomes the unknown token, as in the Hugging Face tokenizer.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "pock/status.hpp"

namespace pock {

struct EncodeOptions {
  bool add_bos = false;       // prepend the BOS token (when the vocabulary has one)
  bool parse_special = true;  // special tokens' text in the input becomes their ids
};

class Tokenizer {
 public:
  static Result<Tokenizer> from_gguf_file(const std::string& path);
  static Result<Tokenizer> from_gguf_bytes(const uint8_t* data, size_t size);
  Tokenizer(Tokenizer&&) noexcept;
  Tokenizer& operator=(Tokenizer&&) noexcept;
  ~Tokenizer();

  Result<std::vector<int64_t>> encode(std::string_view text, const EncodeOptions& options = {}) const;
  // Ids outside the vocabulary are an error naming the first.
  Result<std::string> decode(const std::vector<int64_t>& ids) const;

  int64_t vocab_size() const;
  int64_t bos_id() const;  // -1: none
  int64_t eos_id() const;  // -1: none
  bool add_bos_by_default() const;  // the file's tokenizer.ggml.add_bos_token

  struct Impl;

 private:
  explicit Tokenizer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace pock
