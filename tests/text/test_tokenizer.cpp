// The GGUF tokenizer against SmolLM2's Hugging Face tokenizer: the fixture holds SmolLM2-135M's
// tokenizer metadata (smollm2_tokenizer.gguf.gz) and the ids the reference gives for hard cases
// and fortune lines (tokenizer_expected.jsonl, both from make_tokenizer_fixture.py); encode must
// give those ids and decode the text back. Hostile tokenizer metadata is an error naming it.
#include <catch2/catch.hpp>
#include <zlib.h>

#include <fstream>
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

const Tokenizer& smollm2() {
  static const std::vector<uint8_t> bytes = gunzip(kDir + "smollm2_tokenizer.gguf.gz");
  static const Tokenizer tok = [] {
    auto t = Tokenizer::from_gguf_bytes(bytes.data(), bytes.size());
    INFO(t.status().to_string());
    REQUIRE(t.is_ok());
    return std::move(t.value());
  }();
  return tok;
}

// A GGUF of only tokenizer metadata, written through our writer.
Result<Tokenizer> tokenizer_of(const std::string& model, const std::string& pre, const std::vector<std::string>& tokens,
                               const std::vector<std::string>& merges) {
  gguf::MetadataBuilder m;
  m.add_string("tokenizer.ggml.model", model);
  m.add_string("tokenizer.ggml.pre", pre);
  m.add_string_array("tokenizer.ggml.tokens", tokens);
  m.add_string_array("tokenizer.ggml.merges", merges);
  const std::string path = std::string(POCK_TESTS_DIR) + "/../build-tokenizer-test.gguf";
  REQUIRE(gguf::write_gguf(path, m, {}).is_ok());
  auto t = Tokenizer::from_gguf_file(path);
  std::remove(path.c_str());
  return t;
}

}  // namespace

TEST_CASE("tokenizer: SmolLM2's ids for hard cases and fortune lines, and the text back", "[text]") {
  const Tokenizer& tok = smollm2();
  CHECK(tok.vocab_size() == 49152);
  std::ifstream in(kDir + "tokenizer_expected.jsonl");
  REQUIRE(in.good());
  int lines = 0;
  for (std::string line; std::getline(in, line); ++lines) {
    const nlohmann::json j = nlohmann::json::parse(line);
    const std::string text = j["text"];
    const std::vector<int64_t> want = j["ids"].get<std::vector<int64_t>>();
    auto got = tok.encode(text);
    INFO("text: " << text);
    REQUIRE(got.is_ok());
    CHECK(got.value() == want);
    CHECK(tok.decode(got.value()).value() == text);
  }
  CHECK(lines > 300);
}

TEST_CASE("tokenizer: special tokens, BOS, invalid UTF-8 and ids out of range", "[text]") {
  const Tokenizer& tok = smollm2();
  const std::vector<int64_t> chat = tok.encode("<|im_start|>user").value();
  REQUIRE(!chat.empty());
  CHECK(chat[0] == 1);
  EncodeOptions plain;
  plain.parse_special = false;
  CHECK(tok.encode("<|im_start|>user", plain).value().size() > chat.size());
  EncodeOptions bos;
  bos.add_bos = true;
  if (tok.bos_id() >= 0) CHECK(tok.encode("hi", bos).value().front() == tok.bos_id());
  // Invalid UTF-8: byte tokens, the same bytes back (0xc3 and 0x80 have tokens in SmolLM2's
  // vocabulary; 0xff does not, and becomes the unknown token, as in the reference).
  const std::string invalid = std::string("ok \x80 end \xc3", 9);
  CHECK(tok.decode(tok.encode(invalid).value()).value() == invalid);
  CHECK(tok.encode(std::string("\xff")).value() == std::vector<int64_t>{0});
  CHECK_FALSE(tok.decode({49152}).is_ok());
  CHECK_FALSE(tok.decode({-1}).is_ok());
}

TEST_CASE("tokenizer: bad tokenizer metadata is an error naming it", "[text][hostile]") {
  const std::vector<std::string> bytes_only = [] {
    std::vector<std::string> v;
    for (int b = 0x21; b <= 0x7e; ++b) v.emplace_back(1, static_cast<char>(b));
    return v;
  }();
  CHECK(tokenizer_of("gpt2", "default", bytes_only, {}).is_ok());
  CHECK_THAT(tokenizer_of("llama", "default", bytes_only, {}).status().message(), Catch::Contains("llama"));
  CHECK_THAT(tokenizer_of("gpt2", "qwen2", bytes_only, {}).status().message(), Catch::Contains("qwen2"));
  CHECK_THAT(tokenizer_of("gpt2", "default", {}, {}).status().message(), Catch::Contains("empty"));
  CHECK_THAT(tokenizer_of("gpt2", "default", bytes_only, {"a b"}).status().message(), Catch::Contains("'a b'"));
  CHECK_THAT(tokenizer_of("gpt2", "default", bytes_only, {"ab"}).status().message(), Catch::Contains("left right"));
}
