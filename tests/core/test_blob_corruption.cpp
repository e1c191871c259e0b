// A corrupt blob gives a clean error, never a crash: every single-byte flip and every truncation
// of a small blob, opened through the C API. CI also runs this test under AddressSanitizer and
// UBSan, where an out-of-bounds read that happens not to crash still fails.
#include <catch2/catch.hpp>

#include <cstring>
#include <string>

#include "blob/format.hpp"
#include "pock/pock.h"
#include "support/tiny_blob.hpp"

using namespace pock;

namespace {

struct ByteRange {
  uint64_t begin = 0, end = 0;
  bool contains(uint64_t i) const { return i >= begin && i < end; }
};

struct Layout {
  ByteRange header;   // header + section table, covered by the header checksum
  ByteRange program;  // covered by the program section checksum
  ByteRange weights;  // covered by the weights section checksum
};

Layout read_layout(const std::vector<uint8_t>& bytes) {
  blob::Header header;
  std::memcpy(&header, bytes.data(), sizeof(header));
  blob::SectionEntry sections[2];
  std::memcpy(sections, bytes.data() + sizeof(header), sizeof(sections));
  Layout layout;
  layout.header = {0, sizeof(header) + header.section_count * sizeof(blob::SectionEntry)};
  layout.program = {sections[0].offset, sections[0].offset + sections[0].size};
  layout.weights = {sections[1].offset, sections[1].offset + sections[1].size};
  return layout;
}

struct OpenOutcome {
  pock_status status = POCK_OK;
  std::string message;
  std::vector<float> output;  // filled when the blob opened
};

// Makes every checksum agree with the bytes again, as a forger would after editing them.
void forge_checksums(std::vector<uint8_t>& bytes) {
  blob::Header header;
  std::memcpy(&header, bytes.data(), sizeof(header));
  blob::SectionEntry sections[2];
  std::memcpy(sections, bytes.data() + sizeof(header), sizeof(sections));
  for (blob::SectionEntry& s : sections) s.crc = blob::crc32(bytes.data() + s.offset, s.size);
  header.header_crc = 0;
  std::memcpy(bytes.data(), &header, sizeof(header));
  std::memcpy(bytes.data() + sizeof(header), sections, sizeof(sections));
  header.header_crc = blob::crc32(bytes.data(), sizeof(header) + sizeof(sections));
  std::memcpy(bytes.data(), &header, sizeof(header));
}

OpenOutcome open_and_run(const std::vector<uint8_t>& bytes) {
  OpenOutcome outcome;
  pock_engine* engine = nullptr;
  // A zero-size buffer still needs a valid pointer: the API refuses NULL before looking at size.
  static const uint8_t kEmpty = 0;
  outcome.status = pock_engine_open_buffer(bytes.empty() ? &kEmpty : bytes.data(), bytes.size(), nullptr, &engine);
  if (outcome.status != POCK_OK) {
    outcome.message = pock_last_open_error();
    return outcome;
  }
  outcome.output.resize(6);
  pock_engine_set_input(engine, "x", test::tiny::kInput.data(), 6 * sizeof(float));
  outcome.status = pock_engine_infer(engine);
  pock_engine_get_output(engine, "y", outcome.output.data(), 6 * sizeof(float));
  pock_engine_close(engine);
  return outcome;
}

}  // namespace

TEST_CASE("the unmodified blob opens and runs", "[blob][corruption]") {
  const std::vector<uint8_t> bytes = test::tiny_blob();
  REQUIRE_FALSE(bytes.empty());
  const OpenOutcome outcome = open_and_run(bytes);
  INFO(outcome.message);
  REQUIRE(outcome.status == POCK_OK);
  CHECK(pock::test::nearly_equal(outcome.output, test::tiny::kExpectedOutput));
}

TEST_CASE("every truncation is refused as an invalid blob", "[blob][corruption]") {
  const std::vector<uint8_t> bytes = test::tiny_blob();
  REQUIRE_FALSE(bytes.empty());
  for (size_t length = 0; length < bytes.size(); ++length) {
    const std::vector<uint8_t> truncated(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(length));
    const OpenOutcome outcome = open_and_run(truncated);
    INFO("truncated to " << length << " of " << bytes.size() << " bytes: " << outcome.message);
    REQUIRE(outcome.status == POCK_ERR_INVALID_BLOB);
    REQUIRE_FALSE(outcome.message.empty());
  }
}

TEST_CASE("trailing bytes are refused", "[blob][corruption]") {
  std::vector<uint8_t> bytes = test::tiny_blob();
  bytes.push_back(0);
  const OpenOutcome outcome = open_and_run(bytes);
  CHECK(outcome.status == POCK_ERR_INVALID_BLOB);
  CHECK(outcome.message.find("header says") != std::string::npos);
}

TEST_CASE("every single-byte flip gives a clean error", "[blob][corruption]") {
  const std::vector<uint8_t> original = test::tiny_blob();
  REQUIRE_FALSE(original.empty());
  const Layout layout = read_layout(original);
  REQUIRE(layout.weights.end == original.size());
  size_t padding_bytes = 0;
  // 0x01 and 0x80 flip the lowest and highest bit (a small and a huge change of an integer);
  // 0xFF turns zeros, which most fields are, into all-ones.
  for (const uint8_t mask : {uint8_t{0x01}, uint8_t{0x80}, uint8_t{0xFF}}) {
    for (size_t i = 0; i < original.size(); ++i) {
      std::vector<uint8_t> bytes = original;
      bytes[i] ^= mask;
      const OpenOutcome outcome = open_and_run(bytes);
      INFO("byte " << i << " ^ 0x" << std::hex << int{mask} << std::dec << ": " << outcome.message);
      if (layout.header.contains(i) || layout.program.contains(i)) {
        REQUIRE(outcome.status == POCK_ERR_INVALID_BLOB);
      } else if (layout.weights.contains(i)) {
        REQUIRE(outcome.status == POCK_ERR_INVALID_BLOB);
        REQUIRE(outcome.message == "weights section checksum mismatch");
      } else {
        // Alignment padding between sections belongs to no section and carries no data: a flip
        // there may be accepted, but must not change what the program computes.
        ++padding_bytes;
        if (outcome.status == POCK_OK) REQUIRE(pock::test::nearly_equal(outcome.output, test::tiny::kExpectedOutput));
        else REQUIRE(outcome.status == POCK_ERR_INVALID_BLOB);
      }
    }
  }
  // The writer pads only up to the next 64-byte boundary, so most of the blob is checked.
  CHECK(padding_bytes / 3 < 64);
}

TEST_CASE("a flip in the weights section is found by the checksum", "[blob][corruption]") {
  std::vector<uint8_t> bytes = test::tiny_blob();
  REQUIRE_FALSE(bytes.empty());
  const Layout layout = read_layout(bytes);
  bytes[layout.weights.begin] ^= 0x40;  // first byte of `bias`: a plausible float, not a structural field
  const OpenOutcome outcome = open_and_run(bytes);
  CHECK(outcome.status == POCK_ERR_INVALID_BLOB);
  CHECK(outcome.message == "weights section checksum mismatch");
}

TEST_CASE("every flip of the program with forged checksums is verified or refused cleanly", "[blob][corruption]") {
  // The checksums no longer help here: what stands between a flipped byte and an out-of-bounds
  // access is the FlatBuffer verifier and the consistency checks. A flip may be harmless (a
  // name, the metadata, a schema default) and open; then the program must still run to a status.
  const std::vector<uint8_t> original = test::tiny_blob();
  REQUIRE_FALSE(original.empty());
  const Layout layout = read_layout(original);
  size_t refused = 0, opened = 0;
  for (const uint8_t mask : {uint8_t{0x01}, uint8_t{0x80}, uint8_t{0xFF}}) {
    for (uint64_t i = layout.program.begin; i < layout.program.end; ++i) {
      std::vector<uint8_t> bytes = original;
      bytes[i] ^= mask;
      forge_checksums(bytes);
      const OpenOutcome outcome = open_and_run(bytes);
      INFO("program byte " << i - layout.program.begin << " ^ 0x" << std::hex << int{mask} << std::dec << ": "
                           << outcome.message);
      if (outcome.message.empty() && outcome.output.empty()) FAIL("refused without a message");
      ++(outcome.output.empty() ? refused : opened);
    }
  }
  // Most bytes of a small program are offsets, indices and sizes: most flips must be refused.
  CHECK(refused > opened);
}
