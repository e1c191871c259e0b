// The GGUF reader against llama.cpp's own Python package (gguf-py): a fixture it wrote
// (tests/frontend/gguf/make_fixture.py) with one tensor of each supported type, whose values
// gguf-py's dequantizer gives; our conversion must give the same floats. And hostile files —
// every truncation, flipped bytes, huge counts and sizes — are errors, never crashes or
// gigabyte allocations.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <iterator>
#include <random>
#include <vector>

#include "frontend/gguf/ggml_types.hpp"
#include "frontend/gguf/gguf_file.hpp"
#include "pock/compiler/gguf.hpp"
#include "support/file_bytes.hpp"

using namespace pock;

namespace {

using test::read_file_bytes;
const std::string kFixture = std::string(POCK_TESTS_DIR) + "/frontend/gguf/tiny.gguf";
const std::string kExpected = std::string(POCK_TESTS_DIR) + "/frontend/gguf/tiny_expected.bin";

}  // namespace

TEST_CASE("gguf: metadata and tensor directory of a file gguf-py wrote", "[frontend][gguf]") {
  const std::vector<uint8_t> bytes = read_file_bytes(kFixture);
  auto f = gguf::File::parse(bytes.data(), bytes.size());
  INFO(f.status().message());
  REQUIRE(f.is_ok());
  CHECK(f->version() == 3);
  CHECK(f->get_string("general.architecture").value() == "llama");
  CHECK(f->get_uint("llama.block_count").value() == 1);
  CHECK(f->get_uint("llama.attention.head_count_kv").value() == 2);
  CHECK(f->get_float("llama.rope.freq_base").value() == Approx(10000.0));
  CHECK_FALSE(f->get_uint("general.architecture").is_ok());  // a string, not a number
  CHECK(f->metadata().at("tokenizer.ggml.tokens").array.size() == 3);
  REQUIRE(f->tensors().size() == 8);
  const gguf::TensorInfo* q = f->find_tensor("q4_1");
  REQUIRE(q);
  CHECK(q->dims == std::vector<uint64_t>{64, 4});
  CHECK(q->type == gguf::kQ4_1);
  CHECK(q->nbytes == 4 * 2 * 20);  // two 32-value blocks per row of 64, 20 bytes each
}

TEST_CASE("gguf: every tensor type converts to the floats gguf-py's dequantizer gives", "[frontend][gguf]") {
  const std::vector<uint8_t> bytes = read_file_bytes(kFixture);
  const std::vector<uint8_t> expected = read_file_bytes(kExpected);
  auto f = gguf::File::parse(bytes.data(), bytes.size());
  REQUIRE(f.is_ok());
  size_t at = 0;
  for (const gguf::TensorInfo& t : f->tensors()) {
    INFO(t.name << " (" << gguf::type_name(t.type) << ")");
    uint64_t count = 0;
    REQUIRE(at + 8 <= expected.size());
    std::memcpy(&count, expected.data() + at, 8);
    at += 8;
    REQUIRE(count == t.elements);
    std::vector<float> want(count), got(count);
    std::memcpy(want.data(), expected.data() + at, count * 4);
    at += count * 4;
    REQUIRE(gguf::to_f32(t.type, f->tensor_data(t), t.elements, got.data()).is_ok());
    int differ = 0;
    for (size_t i = 0; i < count; ++i) {
      // d * q + m may round once or twice (numpy vs a fused multiply-add): 1 ulp.
      differ += std::fabs(got[i] - want[i]) > 1e-6f * std::max(1.0f, std::fabs(want[i]));
    }
    CHECK(differ == 0);
  }
  CHECK(at == expected.size());
}

TEST_CASE("gguf: a llama file whose tensors do not match its metadata is refused before a graph is built", "[frontend][gguf][hostile]") {
  const std::vector<uint8_t> bytes = read_file_bytes(kFixture);  // architecture llama, but tensors "f32", "q8_0", ...
  auto g = import_gguf_bytes(bytes.data(), bytes.size(), {1, 4});
  REQUIRE_FALSE(g.is_ok());
  CHECK_THAT(g.status().message(), Catch::Contains("token_embd.weight"));
}

TEST_CASE("gguf: every truncation of the file is an error, never a crash", "[frontend][gguf][hostile]") {
  const std::vector<uint8_t> bytes = read_file_bytes(kFixture);
  // The writer pads the file to its alignment: cutting only padding leaves a whole file.
  auto whole = gguf::File::parse(bytes.data(), bytes.size());
  REQUIRE(whole.is_ok());
  size_t end = 0;
  for (const gguf::TensorInfo& t : whole->tensors()) {
    end = std::max(end, static_cast<size_t>(whole->tensor_data(t) + t.nbytes - bytes.data()));
  }
  REQUIRE(end <= bytes.size());
  for (size_t n = 0; n < end; ++n) {
    std::vector<uint8_t> cut(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(n));
    auto f = gguf::File::parse(cut.data(), cut.size());
    INFO("first " << n << " bytes");
    CHECK_FALSE(f.is_ok());
  }
}

TEST_CASE("gguf: huge counts, lengths, dimensions and offsets are refused before any allocation", "[frontend][gguf][hostile]") {
  const std::vector<uint8_t> bytes = read_file_bytes(kFixture);
  auto set_u64 = [&](size_t offset, uint64_t v) {
    std::vector<uint8_t> b = bytes;
    std::memcpy(b.data() + offset, &v, 8);
    return b;
  };
  // Header: magic(4) version(4) tensor_count(8) kv_count(8), then the first key's length.
  for (const auto& [what, b] : {std::pair{"tensor count", set_u64(8, uint64_t{1} << 60)},
                                std::pair{"metadata count", set_u64(16, uint64_t{1} << 62)},
                                std::pair{"first key length", set_u64(24, ~uint64_t{0})}}) {
    INFO(what);
    auto f = gguf::File::parse(b.data(), b.size());
    REQUIRE_FALSE(f.is_ok());
    CHECK_THAT(f.status().message(), Catch::Contains("GGUF"));
  }
  // Random byte flips anywhere: parse either fails cleanly or yields tensors inside the file.
  std::mt19937 gen(3);
  for (int round = 0; round < 2000; ++round) {
    std::vector<uint8_t> b = bytes;
    for (int k = 0; k < 3; ++k) b[gen() % b.size()] ^= static_cast<uint8_t>(1u << (gen() % 8));
    auto f = gguf::File::parse(b.data(), b.size());
    if (!f.is_ok()) continue;
    for (const gguf::TensorInfo& t : f->tensors()) {
      const uint8_t* p = f->tensor_data(t);
      CHECK(p >= b.data());
      CHECK(p + t.nbytes <= b.data() + b.size());
    }
  }
}
