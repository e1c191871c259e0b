// Byte-level BPE: each byte of a pre-tokenized word becomes the printable code point GPT-2 maps
// it to (bytes_to_unicode), then the pair of adjacent symbols with the lowest merge rank is
// merged until no pair has a rank; the symbols left are vocabulary entries.
#include <algorithm>
#include <climits>
#include <fstream>
#include <iterator>
#include <mutex>
#include <unordered_map>

#include "frontend/gguf/gguf_file.hpp"
#include "pock/tokenizer.hpp"
#include "text/pre_tokenizer.hpp"

namespace pock {
namespace {

Status bad(const std::string& what) { return Status(Code::kInvalidArgument, "GGUF tokenizer: " + what); }

// GPT-2's map from bytes to printable code points: the printable Latin-1 bytes map to
// themselves, the others to 256, 257, ... in byte order.
std::vector<uint32_t> byte_to_code_point() {
  std::vector<uint32_t> map(256);
  uint32_t next = 256;
  for (uint32_t b = 0; b < 256; ++b) {
    const bool printable = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
    map[b] = printable ? b : next++;
  }
  return map;
}

void append_utf8(std::string& s, uint32_t cp) {
  if (cp < 0x80) {
    s += static_cast<char>(cp);
  } else if (cp < 0x800) {
    s += static_cast<char>(0xC0 | (cp >> 6));
    s += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    s += static_cast<char>(0xE0 | (cp >> 12));
    s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    s += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

Result<std::vector<std::string>> string_array(const gguf::File& f, const std::string& key) {
  auto it = f.metadata().find(key);
  if (it == f.metadata().end() || !it->second.is_array) return bad("'" + key + "' is missing or not an array");
  std::vector<std::string> out;
  out.reserve(it->second.array.size());
  for (const gguf::Scalar& s : it->second.array) {
    const std::string* v = std::get_if<std::string>(&s);
    if (!v) return bad("'" + key + "' holds a value that is not a string");
    out.push_back(*v);
  }
  return out;
}

int64_t optional_id(const gguf::File& f, const std::string& key, int64_t vocab) {
  auto v = f.get_uint(key);
  return v.is_ok() && v.value() < static_cast<uint64_t>(vocab) ? static_cast<int64_t>(v.value()) : -1;
}

}  // namespace

struct Tokenizer::Impl {
  std::vector<std::string> tokens;                 // in byte-mapped form
  std::unordered_map<std::string, int64_t> ids;    // token text -> id
  std::unordered_map<std::string, int32_t> ranks;  // "left right" -> merge rank
  std::vector<std::pair<std::string, int64_t>> specials;  // raw text -> id, longest first
  std::vector<bool> is_special;                    // by id
  bool special_first[256] = {};                    // bytes a special token starts with
  std::vector<uint32_t> byte_cp;                   // byte -> code point
  std::unordered_map<uint32_t, uint8_t> cp_byte;   // code point -> byte
  text::PreTokenizerOptions pre;
  int64_t bos = -1, eos = -1, unknown = -1;
  bool add_bos = false;
  mutable std::mutex cache_mutex;
  mutable std::unordered_map<std::string, std::vector<int64_t>> cache;  // word -> ids

  Status encode_word(std::string_view word, std::vector<int64_t>& out) const;
};

Status Tokenizer::Impl::encode_word(std::string_view word, std::vector<int64_t>& out) const {
  {
    std::lock_guard<std::mutex> lock(cache_mutex);
    auto hit = cache.find(std::string(word));
    if (hit != cache.end()) {
      out.insert(out.end(), hit->second.begin(), hit->second.end());
      return Status::ok();
    }
  }
  std::vector<std::string> symbols;
  symbols.reserve(word.size());
  for (unsigned char b : word) {
    std::string s;
    append_utf8(s, byte_cp[b]);
    symbols.push_back(std::move(s));
  }
  // Merge the lowest-ranked adjacent pair until none has a rank (words are short: a scan per
  // merge costs less than a heap would).
  while (symbols.size() > 1) {
    int32_t best = INT32_MAX;
    size_t at = 0;
    for (size_t i = 0; i + 1 < symbols.size(); ++i) {
      auto r = ranks.find(symbols[i] + " " + symbols[i + 1]);
      if (r != ranks.end() && r->second < best) {
        best = r->second;
        at = i;
      }
    }
    if (best == INT32_MAX) break;
    symbols[at] += symbols[at + 1];
    symbols.erase(symbols.begin() + static_cast<std::ptrdiff_t>(at) + 1);
  }
  std::vector<int64_t> word_ids;
  for (const std::string& s : symbols) {
    auto id = ids.find(s);
    // A byte the vocabulary has no token for (SmolLM2 lacks some control bytes) becomes the
    // unknown token, as the Hugging Face tokenizer does; without one it is dropped, as llama.cpp does.
    if (id != ids.end()) word_ids.push_back(id->second);
    else if (unknown >= 0) word_ids.push_back(unknown);
  }
  out.insert(out.end(), word_ids.begin(), word_ids.end());
  std::lock_guard<std::mutex> lock(cache_mutex);
  if (cache.size() < 65536) cache.emplace(std::string(word), std::move(word_ids));
  return Status::ok();
}

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
  POCK_ASSIGN_OR_RETURN(const gguf::File f, gguf::File::parse(data, size));
  POCK_ASSIGN_OR_RETURN(const std::string model, f.get_string("tokenizer.ggml.model"));
  if (model != "gpt2") return Status(Code::kUnsupportedOp, "GGUF tokenizer: model '" + model + "' is not supported (gpt2: byte-level BPE)");
  std::string pre = "default";
  if (f.metadata().count("tokenizer.ggml.pre")) {
    POCK_ASSIGN_OR_RETURN(pre, f.get_string("tokenizer.ggml.pre"));
  }
  auto impl = std::make_unique<Impl>();
  if (pre == "smollm") {
    impl->pre.isolate_digits = true;
  } else if (pre != "default" && pre != "gpt2" && pre != "gpt-2") {
    return Status(Code::kUnsupportedOp, "GGUF tokenizer: pre-tokenizer '" + pre + "' is not supported (default, gpt2, smollm)");
  }
  POCK_ASSIGN_OR_RETURN(impl->tokens, string_array(f, "tokenizer.ggml.tokens"));
  if (impl->tokens.empty()) return bad("the vocabulary is empty");
  POCK_ASSIGN_OR_RETURN(const std::vector<std::string> merges, string_array(f, "tokenizer.ggml.merges"));
  const int64_t vocab = static_cast<int64_t>(impl->tokens.size());
  std::vector<int64_t> types(impl->tokens.size(), 1);
  if (auto it = f.metadata().find("tokenizer.ggml.token_type"); it != f.metadata().end() && it->second.is_array) {
    for (size_t i = 0; i < it->second.array.size() && i < types.size(); ++i) {
      if (const int64_t* v = std::get_if<int64_t>(&it->second.array[i])) types[i] = *v;
      else if (const uint64_t* u = std::get_if<uint64_t>(&it->second.array[i])) types[i] = static_cast<int64_t>(*u);
    }
  }
  for (int64_t i = 0; i < vocab; ++i) {
    impl->ids.emplace(impl->tokens[static_cast<size_t>(i)], i);
    // llama.cpp's token types: 3 control, 4 user-defined: matched as whole strings in text.
    if ((types[static_cast<size_t>(i)] == 3 || types[static_cast<size_t>(i)] == 4) && !impl->tokens[static_cast<size_t>(i)].empty()) {
      impl->specials.emplace_back(impl->tokens[static_cast<size_t>(i)], i);
    }
  }
  impl->is_special.assign(impl->tokens.size(), false);
  for (const auto& [text, id] : impl->specials) {
    impl->is_special[static_cast<size_t>(id)] = true;
    impl->special_first[static_cast<unsigned char>(text[0])] = true;
  }
  std::stable_sort(impl->specials.begin(), impl->specials.end(), [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });
  impl->ranks.reserve(merges.size());
  for (size_t r = 0; r < merges.size(); ++r) {
    const std::string& m = merges[r];
    const size_t space = m.find(' ', 1);
    if (space == std::string::npos || space + 1 >= m.size()) return bad("merge " + std::to_string(r) + " '" + m + "' is not 'left right'");
    if (!impl->ids.count(m.substr(0, space) + m.substr(space + 1))) {
      return bad("merge " + std::to_string(r) + " '" + m + "' makes a token the vocabulary does not have");
    }
    impl->ranks.emplace(m, static_cast<int32_t>(std::min<size_t>(r, INT32_MAX - 1)));
  }
  impl->byte_cp = byte_to_code_point();
  for (uint32_t b = 0; b < 256; ++b) impl->cp_byte[impl->byte_cp[b]] = static_cast<uint8_t>(b);
  impl->bos = optional_id(f, "tokenizer.ggml.bos_token_id", vocab);
  impl->eos = optional_id(f, "tokenizer.ggml.eos_token_id", vocab);
  impl->unknown = optional_id(f, "tokenizer.ggml.unknown_token_id", vocab);
  if (auto it = f.metadata().find("tokenizer.ggml.add_bos_token"); it != f.metadata().end()) {
    if (const bool* v = std::get_if<bool>(&it->second.scalar)) impl->add_bos = *v;
  }
  return Tokenizer(std::move(impl));
}

Result<std::vector<int64_t>> Tokenizer::encode(std::string_view text, const EncodeOptions& options) const {
  std::vector<int64_t> out;
  if (options.add_bos && impl_->bos >= 0) out.push_back(impl_->bos);
  auto plain = [&](std::string_view part) -> Status {
    for (const auto& [b, e] : text::pre_tokenize(part, impl_->pre)) POCK_RETURN_IF_ERROR(impl_->encode_word(part.substr(b, e - b), out));
    return Status::ok();
  };
  size_t from = 0, i = 0;
  while (options.parse_special && i < text.size()) {
    const std::pair<std::string, int64_t>* hit = nullptr;
    if (impl_->special_first[static_cast<unsigned char>(text[i])]) {
      for (const auto& s : impl_->specials) {
        if (text.compare(i, s.first.size(), s.first) == 0) {
          hit = &s;
          break;
        }
      }
    }
    if (!hit) {
      ++i;
      continue;
    }
    POCK_RETURN_IF_ERROR(plain(text.substr(from, i - from)));
    out.push_back(hit->second);
    i += hit->first.size();
    from = i;
  }
  POCK_RETURN_IF_ERROR(plain(text.substr(from)));
  return out;
}

Result<std::string> Tokenizer::decode(const std::vector<int64_t>& ids) const {
  std::string out;
  for (int64_t id : ids) {
    if (id < 0 || id >= vocab_size()) return Status(Code::kInvalidArgument, "tokenizer: id " + std::to_string(id) + " is outside the vocabulary");
    const std::string& t = impl_->tokens[static_cast<size_t>(id)];
    // Special tokens are their text; others are byte-mapped code points, each one byte.
    if (impl_->is_special[static_cast<size_t>(id)]) {
      out += t;
      continue;
    }
    for (size_t i = 0; i < t.size();) {
      const auto b = static_cast<unsigned char>(t[i]);
      const size_t n = b < 0x80 ? 1 : (b >> 5) == 0x6 ? 2 : 3;
      uint32_t cp = n == 1 ? b : n == 2 ? (b & 0x1F) : (b & 0x0F);
      for (size_t k = 1; k < n && i + k < t.size(); ++k) cp = (cp << 6) | (static_cast<unsigned char>(t[i + k]) & 0x3F);
      auto byte = impl_->cp_byte.find(cp);
      if (byte != impl_->cp_byte.end()) out += static_cast<char>(byte->second);
      i += n;
    }
  }
  return out;
}

int64_t Tokenizer::vocab_size() const { return static_cast<int64_t>(impl_->tokens.size()); }
int64_t Tokenizer::bos_id() const { return impl_->bos; }
int64_t Tokenizer::eos_id() const { return impl_->eos; }
bool Tokenizer::add_bos_by_default() const { return impl_->add_bos; }

}  // namespace pock
