// The GGUF tokenizer against the reference tokenizers: the fixture holds SmolLM2-135M's tokenizer
// metadata (smollm2_tokenizer.gguf.gz) and the ids Hugging Face's tokenizer gives for hard cases
// and fortunes with each pre-tokenizer, llama.cpp's for bytes that are not UTF-8, and Hugging
// Face's decoded text for ids (tokenizer_expected.jsonl; both from make_tokenizer_fixture.py).
// Hostile tokenizer metadata is an error naming it.
#include <catch2/catch.hpp>
#include <zlib.h>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "frontend/gguf/gguf_writer.hpp"
#include "pock/tokenizer.hpp"

using namespace pock;

namespace {

const std::string kDir = std::string(POCK_TESTS_DIR) + "/text/";

std::vector<uint8_t> gunzip(const std::string& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  REQUIRE(f != nullptr);
  std::vector<uint8_t> out;
  uint8_t buffer[1 << 16];
  int n = 0;
  while ((n = gzread(f, buffer, sizeof(buffer))) > 0) out.insert(out.end(), buffer, buffer + n);
  gzclose(f);
  return out;
}

void put_u64(std::vector<uint8_t>& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}

// The fixture with tokenizer.ggml.pre set to `pre`: the value is spliced in place (the file has
// no tensors, so nothing after the metadata moves with it but the alignment padding).
std::vector<uint8_t> with_pre(std::vector<uint8_t> bytes, const std::string& pre) {
  const std::string key = "tokenizer.ggml.pre";
  auto at = std::search(bytes.begin(), bytes.end(), key.begin(), key.end());
  REQUIRE(at != bytes.end());
  const size_t value = static_cast<size_t>(at - bytes.begin()) + key.size() + 4;  // past the u32 type
  uint64_t old_length = 0;
  std::memcpy(&old_length, bytes.data() + value, 8);
  std::vector<uint8_t> encoded;
  put_u64(encoded, pre.size());
  encoded.insert(encoded.end(), pre.begin(), pre.end());
  bytes.erase(bytes.begin() + static_cast<std::ptrdiff_t>(value), bytes.begin() + static_cast<std::ptrdiff_t>(value + 8 + old_length));
  bytes.insert(bytes.begin() + static_cast<std::ptrdiff_t>(value), encoded.begin(), encoded.end());
  bytes.resize(bytes.size() + 32);  // the (empty) data section starts at the next 32-byte boundary
  return bytes;
}

const Tokenizer& smollm2(const std::string& pre = "smollm") {
  static const std::vector<uint8_t> bytes = gunzip(kDir + "smollm2_tokenizer.gguf.gz");
  static std::map<std::string, Tokenizer> loaded;
  auto it = loaded.find(pre);
  if (it == loaded.end()) {
    const std::vector<uint8_t> file = with_pre(bytes, pre);
    auto t = Tokenizer::from_gguf_bytes(file.data(), file.size());
    INFO(t.status().to_string());
    REQUIRE(t.is_ok());
    CHECK(t->pre_tokenizer_name() == pre);
    it = loaded.emplace(pre, std::move(t.value())).first;
  }
  return it->second;
}

std::string from_hex(const std::string& hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) out += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
  return out;
}

// A GGUF of only tokenizer metadata, written through our writer; `extra` holds pairs already
// encoded (`extra_count` of them) for the values MetadataBuilder has no method for.
Result<Tokenizer> tokenizer_of(const std::string& model, const std::string& pre, const std::vector<std::string>& tokens,
                               const std::vector<std::string>& merges, const std::vector<uint8_t>& extra = {},
                               uint64_t extra_count = 0) {
  gguf::MetadataBuilder m;
  m.add_string("tokenizer.ggml.model", model);
  m.add_string("tokenizer.ggml.pre", pre);
  m.add_string_array("tokenizer.ggml.tokens", tokens);
  m.add_string_array("tokenizer.ggml.merges", merges);
  if (extra_count) m.add_encoded(extra.data(), extra.size(), extra_count);
  const std::string path = (std::filesystem::temp_directory_path() / ("pock-tokenizer-test-" + std::to_string(getpid()) + ".gguf")).string();
  REQUIRE(gguf::write_gguf(path, m, {}).is_ok());
  auto t = Tokenizer::from_gguf_file(path);
  std::remove(path.c_str());
  return t;
}

// One encoded key/value pair: the key, then `type` and its value bytes.
std::vector<uint8_t> pair(const std::string& key, uint32_t type, const std::vector<uint8_t>& value) {
  std::vector<uint8_t> out;
  put_u64(out, key.size());
  out.insert(out.end(), key.begin(), key.end());
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<uint8_t>(type >> (8 * i)));
  out.insert(out.end(), value.begin(), value.end());
  return out;
}

std::vector<uint8_t> u32_value(uint32_t v) { return {uint8_t(v), uint8_t(v >> 8), uint8_t(v >> 16), uint8_t(v >> 24)}; }

// An array of `count` elements of GGUF type `element` (4 bytes each: u32 / i32 / f32).
std::vector<uint8_t> array_value(uint32_t element, uint64_t count, uint32_t fill) {
  std::vector<uint8_t> out = u32_value(element);
  put_u64(out, count);
  for (uint64_t i = 0; i < count; ++i) {
    const std::vector<uint8_t> v = u32_value(fill);
    out.insert(out.end(), v.begin(), v.end());
  }
  return out;
}

const std::vector<std::string>& printable_bytes() {
  static const std::vector<std::string> v = [] {
    std::vector<std::string> out;
    for (int b = 0x21; b <= 0x7e; ++b) out.emplace_back(1, static_cast<char>(b));
    return out;
  }();
  return v;
}

}  // namespace

TEST_CASE("tokenizer: the reference's ids for hard cases and fortunes, every pre-tokenizer, and its text back", "[text]") {
  std::ifstream in(kDir + "tokenizer_expected.jsonl");
  REQUIRE(in.good());
  std::map<std::string, int> encoded;
  int decoded = 0;
  for (std::string line; std::getline(in, line);) {
    const nlohmann::json j = nlohmann::json::parse(line);
    if (j.contains("decode")) {
      DecodeOptions options;
      options.skip_special = j["skip_special"].get<bool>();
      const auto got = smollm2().decode(j["decode"].get<std::vector<int64_t>>(), options);
      REQUIRE(got.is_ok());
      CHECK(got.value() == j["text"].get<std::string>());
      ++decoded;
      continue;
    }
    const std::string pre = j["pre"];
    const bool utf8 = j.contains("text");
    const std::string text = utf8 ? j["text"].get<std::string>() : from_hex(j["hex"]);
    const std::vector<int64_t> want = j["ids"].get<std::vector<int64_t>>();
    const Tokenizer& tok = smollm2(pre);
    auto got = tok.encode(text);
    INFO("pre " << pre << ", text: " << text);
    REQUIRE(got.is_ok());
    CHECK(got.value() == want);
    // Valid UTF-8 whose bytes all have tokens comes back unchanged.
    const bool lossless = utf8 && std::find(want.begin(), want.end(), int64_t{0}) == want.end();
    if (lossless) CHECK(tok.decode(got.value()).value() == text);
    ++encoded[pre];
  }
  CHECK(encoded["smollm"] > 300);
  for (const char* pre : {"gpt-2", "llama-bpe", "default"}) CHECK(encoded[pre] > 50);
  CHECK(decoded > 10);
}

TEST_CASE("tokenizer: special tokens, BOS, invalid UTF-8 and ids out of range", "[text]") {
  const Tokenizer& tok = smollm2();
  CHECK(tok.vocab_size() == 49152);
  CHECK(tok.bos_id() == 1);
  CHECK(tok.eos_id() == 2);
  CHECK_FALSE(tok.add_bos_by_default());
  const std::vector<int64_t> chat = tok.encode("<|im_start|>user").value();
  REQUIRE(!chat.empty());
  CHECK(chat[0] == 1);
  EncodeOptions plain;
  plain.parse_special = false;
  CHECK(tok.encode("<|im_start|>user", plain).value().size() > chat.size());
  EncodeOptions bos;
  bos.add_bos = true;
  CHECK(tok.encode("hi", bos).value().front() == tok.bos_id());
  // Bytes that are not UTF-8 become U+FFFD (as llama.cpp); decode then gives U+FFFD back.
  CHECK(tok.encode(std::string("\xff")).value() == tok.encode("\xEF\xBF\xBD").value());
  // Decoding: raw bytes on request, U+FFFD for a token that ends inside a character otherwise.
  const std::vector<int64_t> smile = tok.encode("\xF0\x9F\x99\x82").value();  // U+1F642
  REQUIRE(smile.size() > 1);
  const std::vector<int64_t> first(smile.begin(), smile.end() - 1);
  DecodeOptions raw;
  raw.replace_invalid_utf8 = false;
  CHECK(tok.decode(first).value() == "\xEF\xBF\xBD");
  CHECK(tok.decode(first, raw).value() + tok.decode({smile.back()}, raw).value() == "\xF0\x9F\x99\x82");
  CHECK_FALSE(tok.decode({49152}).is_ok());
  CHECK_FALSE(tok.decode({-1}).is_ok());
}

TEST_CASE("tokenizer: bad tokenizer metadata is an error naming it", "[text][hostile]") {
  const std::vector<std::string>& bytes = printable_bytes();
  CHECK(tokenizer_of("gpt2", "default", bytes, {}).is_ok());
  CHECK(tokenizer_of("gpt2", "smollm", bytes, {"a b"}).status().message().find("'a b'") != std::string::npos);
  CHECK_THAT(tokenizer_of("llama", "default", bytes, {}).status().message(), Catch::Contains("SentencePiece"));
  CHECK_THAT(tokenizer_of("bert", "default", bytes, {}).status().message(), Catch::Contains("'bert'"));
  CHECK_THAT(tokenizer_of("gpt2", "qwen2", bytes, {}).status().message(), Catch::Contains("'qwen2'"));
  CHECK_THAT(tokenizer_of("gpt2", "qwen2", bytes, {}).status().message(), Catch::Contains("llama-bpe"));
  CHECK_THAT(tokenizer_of("gpt2", "default", {}, {}).status().message(), Catch::Contains("empty"));
  // Merges: a part or the result outside the vocabulary, or not two parts.
  CHECK_THAT(tokenizer_of("gpt2", "default", bytes, {"a zz"}).status().message(), Catch::Contains("names a token"));
  CHECK_THAT(tokenizer_of("gpt2", "default", bytes, {"a b"}).status().message(), Catch::Contains("makes a token"));
  CHECK_THAT(tokenizer_of("gpt2", "default", bytes, {"ab"}).status().message(), Catch::Contains("left right"));
  CHECK_THAT(tokenizer_of("gpt2", "default", bytes, {"a b c"}).status().message(), Catch::Contains("left right"));
  // Token types: not integers, or not one per token.
  constexpr uint32_t kU32 = 4, kF32 = 6, kArray = 9;
  CHECK_THAT(tokenizer_of("gpt2", "default", bytes, {}, pair("tokenizer.ggml.token_type", kArray, array_value(kF32, bytes.size(), 0)), 1)
                 .status()
                 .message(),
             Catch::Contains("not an integer"));
  CHECK_THAT(tokenizer_of("gpt2", "default", bytes, {}, pair("tokenizer.ggml.token_type", kArray, array_value(kU32, 3, 1)), 1)
                 .status()
                 .message(),
             Catch::Contains("3 entries"));
  // Special ids outside the vocabulary, or not integers.
  CHECK_THAT(tokenizer_of("gpt2", "default", bytes, {}, pair("tokenizer.ggml.bos_token_id", kU32, u32_value(94)), 1).status().message(),
             Catch::Contains("bos_token_id"));
  CHECK_THAT(tokenizer_of("gpt2", "default", bytes, {}, pair("tokenizer.ggml.unknown_token_id", kF32, u32_value(0)), 1).status().message(),
             Catch::Contains("unknown_token_id"));
  CHECK(tokenizer_of("gpt2", "default", bytes, {}, pair("tokenizer.ggml.eos_token_id", kU32, u32_value(93)), 1).is_ok());
}
