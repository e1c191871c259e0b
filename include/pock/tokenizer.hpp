// Text to token ids and back for language models read from GGUF files: the byte-level BPE of
// the GPT-2 family (tokenizer.ggml.model "gpt2": SmolLM2, GPT-2, LLaMA-3), from the file's
// vocabulary, merges, token types and special token ids. Equal token for token to the model's
// reference tokenizer (tests/text/: Hugging Face's tokenizers and llama.cpp's).
//
//   POCK_ASSIGN_OR_RETURN(pock::Tokenizer tok, pock::Tokenizer::from_gguf_file("model.gguf"));
//   POCK_ASSIGN_OR_RETURN(std::vector<int64_t> ids, tok.encode("Hello, world"));
//   POCK_ASSIGN_OR_RETURN(std::string text, tok.decode(ids));
//
// Pre-tokenizers (tokenizer.ggml.pre): "smollm", "gpt-2" (also "gpt2"), "llama-bpe" (LLaMA-3) and
// "default" (llama.cpp's split for files that name none); others are refused by name, as are
// SentencePiece vocabularies (tokenizer.ggml.model "llama").
//
// Control tokens ("<|im_start|>") written in the text become their ids unless
// EncodeOptions::parse_special is off; user-defined tokens always do. Input that is not valid
// UTF-8 has each offending byte replaced by U+FFFD first, as llama.cpp does. A byte the
// vocabulary has no token for (SmolLM2 lacks a few control bytes) becomes the unknown token (one
// per run of such bytes), as in the Hugging Face tokenizer, or is dropped when there is none.
// A Tokenizer is immutable once loaded: encode and decode may run on many threads at once.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "pock/status.hpp"

namespace pock {

struct EncodeOptions {
  bool add_bos = false;       // prepend the BOS token (add_bos_by_default() says what the file asks)
  bool parse_special = true;  // control tokens' text in the input becomes their ids
};

struct DecodeOptions {
  bool skip_special = false;  // leave control tokens out
  // true: bytes that do not form valid UTF-8 (a token ending inside a character) become U+FFFD,
  // as Hugging Face's decode does; false: the bytes as they are, which concatenate correctly
  // when a text is decoded a few tokens at a time (streaming generation).
  bool replace_invalid_utf8 = true;
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
  Result<std::string> decode(const std::vector<int64_t>& ids, const DecodeOptions& options = {}) const;

  int64_t vocab_size() const;
  int64_t bos_id() const;  // -1: none
  int64_t eos_id() const;  // -1: none
  bool add_bos_by_default() const;  // the file's tokenizer.ggml.add_bos_token
  const std::string& pre_tokenizer_name() const;

  struct Impl;

 private:
  explicit Tokenizer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace pock
