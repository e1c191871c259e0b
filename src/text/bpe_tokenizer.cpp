// pock::Tokenizer: a GGUF file's byte-level BPE tokenizer, put together from the parts in this
// folder: the checked metadata (gguf_vocabulary), special tokens found in the text
// (special_tokens), UTF-8 repair (utf8), the pre-tokenizer's split (pre_tokenizer) and the
// merges within each word (bpe_model); decoding maps GPT-2's byte alphabet back (byte_unicode).
#include <fstream>
#include <iterator>

#include "frontend/gguf/gguf_file.hpp"
#include "pock/tokenizer.hpp"
#include "text/bpe_model.hpp"
#include "text/byte_unicode.hpp"
#include "text/gguf_vocabulary.hpp"
#include "text/pre_tokenizer.hpp"
#include "text/special_tokens.hpp"
#include "text/utf8.hpp"

namespace pock {

struct Tokenizer::Impl {
  Impl(text::BpeModel model, text::PreTokenizer pre) : bpe(std::move(model)), pre_tokenizer(std::move(pre)) {}
  text::BpeModel bpe;
  text::PreTokenizer pre_tokenizer;
  text::SpecialTokens specials;
  int64_t bos = -1, eos = -1;
  bool add_bos = false;
};

Tokenizer::Tokenizer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Tokenizer::Tokenizer(Tokenizer&&) noexcept = default;
Tokenizer& Tokenizer::operator=(Tokenizer&&) noexcept = default;
Tokenizer::~Tokenizer() = default;

Result<Tokenizer> Tokenizer::from_gguf_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status(Code::kIo, "cannot open '" + path + "'");
  const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto t = from_gguf_bytes(bytes.data(), bytes.size());
  if (!t.is_ok()) return Status(t.status().code(), path + ": " + t.status().message());
  return t;
}

Result<Tokenizer> Tokenizer::from_gguf_bytes(const uint8_t* data, size_t size) {
  auto fail = [](const Status& s) { return Status(s.code(), "GGUF tokenizer: " + s.message()); };
  auto file = gguf::File::parse(data, size);
  if (!file.is_ok()) return fail(file.status());
  auto vocabulary = text::read_gguf_vocabulary(file.value());
  if (!vocabulary.is_ok()) return fail(vocabulary.status());
  text::GgufVocabulary& v = vocabulary.value();
  if (v.model == "llama") {
    return fail(Status(Code::kUnsupportedOp, "SentencePiece vocabularies (tokenizer.ggml.model 'llama') are not supported yet; "
                                             "byte-level BPE ('gpt2') is"));
  }
  if (v.model != "gpt2") {
    return fail(Status(Code::kUnsupportedOp, "tokenizer.ggml.model '" + v.model + "' is not supported (gpt2: byte-level BPE)"));
  }
  if (!file->metadata().count("tokenizer.ggml.merges")) {
    return fail(Status(Code::kInvalidArgument, "'tokenizer.ggml.merges' is missing: byte-level BPE needs its merges"));
  }
  auto pre = text::PreTokenizer::create(v.pre);
  if (!pre.is_ok()) return fail(pre.status());
  text::SpecialTokens specials(v.tokens, v.types);
  auto bpe = text::BpeModel::create(std::move(v.tokens), v.merges, static_cast<int32_t>(v.unknown), pre->ignore_merges());
  if (!bpe.is_ok()) return fail(bpe.status());
  auto impl = std::make_unique<Impl>(std::move(bpe.value()), std::move(pre.value()));
  impl->specials = std::move(specials);
  impl->bos = v.bos;
  impl->eos = v.eos;
  impl->add_bos = v.add_bos;
  return Tokenizer(std::move(impl));
}

Result<std::vector<int64_t>> Tokenizer::encode(std::string_view text, const EncodeOptions& options) const {
  std::vector<int64_t> out;
  if (options.add_bos && impl_->bos >= 0) out.push_back(impl_->bos);
  std::vector<text::SpecialTokens::Part> parts;
  impl_->specials.split(text, options.parse_special, parts);
  std::vector<std::pair<size_t, size_t>> words;
  for (const text::SpecialTokens::Part& part : parts) {
    if (part.id >= 0) {
      out.push_back(part.id);
      continue;
    }
    const std::string plain = text::replace_invalid_bytes(text.substr(part.begin, part.end - part.begin));
    words.clear();
    POCK_RETURN_IF_ERROR(impl_->pre_tokenizer.split(plain, words));
    for (const auto& [begin, end] : words) impl_->bpe.encode_word(std::string_view(plain).substr(begin, end - begin), out);
  }
  return out;
}

Result<std::string> Tokenizer::decode(const std::vector<int64_t>& ids, const DecodeOptions& options) const {
  std::string bytes;
  for (const int64_t id : ids) {
    if (id < 0 || id >= vocab_size()) {
      return Status(Code::kInvalidArgument, "tokenizer: id " + std::to_string(id) + " is outside the " +
                                                std::to_string(vocab_size()) + " tokens");
    }
    if (options.skip_special && impl_->specials.is_control(id)) continue;
    // As Hugging Face's byte-level decoder: a token in the byte alphabet stands for its bytes;
    // one with any other character (a special token with a space, say) is its own text.
    const std::string& token = impl_->bpe.tokens()[static_cast<size_t>(id)];
    if (!text::alphabet_to_bytes(token, bytes)) bytes += token;
  }
  if (!options.replace_invalid_utf8) return bytes;
  std::string out;
  out.reserve(bytes.size());
  text::append_lossy_utf8(out, bytes);
  return out;
}

int64_t Tokenizer::vocab_size() const { return static_cast<int64_t>(impl_->bpe.tokens().size()); }
int64_t Tokenizer::bos_id() const { return impl_->bos; }
int64_t Tokenizer::eos_id() const { return impl_->eos; }
bool Tokenizer::add_bos_by_default() const { return impl_->add_bos; }
const std::string& Tokenizer::pre_tokenizer_name() const { return impl_->pre_tokenizer.name(); }

}  // namespace pock
