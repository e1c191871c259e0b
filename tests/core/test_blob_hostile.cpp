// A hostile blob — every checksum valid, contents crafted to make a loader read or write out of
// bounds — is rejected by the verifier before anything runs, with its own code and a message
// naming what is wrong. Each case breaks one field of a valid hand-written program.
#include <catch2/catch.hpp>

#include <cstring>
#include <functional>
#include <limits>
#include <string>

#include "blob/format.hpp"
#include "blob/reader.hpp"
#include "pock/pock.h"
#include "support/tiny_blob.hpp"

using namespace pock;
namespace tiny = pock::test::tiny;

namespace {

struct Rejection {
  pock_status status = POCK_OK;
  std::string message;
};

Rejection open_bytes(const std::vector<uint8_t>& bytes) {
  pock_engine* engine = nullptr;
  Rejection r;
  r.status = pock_engine_open_buffer(bytes.data(), bytes.size(), nullptr, &engine);
  r.message = pock_last_open_error();
  if (engine) pock_engine_close(engine);
  return r;
}

struct HostileProgram {
  const char* what;
  std::function<void(ProgramSpec&)> break_it;
  pock_status expected;
  const char* message_part;
};

// Rewrites header and section table fields, then recomputes the header checksum as a forger would.
void forge_header(std::vector<uint8_t>& bytes, const std::function<void(blob::Header&, blob::SectionEntry*)>& edit) {
  blob::Header header;
  std::memcpy(&header, bytes.data(), sizeof(header));
  blob::SectionEntry sections[2];
  std::memcpy(sections, bytes.data() + sizeof(header), sizeof(sections));
  edit(header, sections);
  header.header_crc = 0;
  std::memcpy(bytes.data(), &header, sizeof(header));
  std::memcpy(bytes.data() + sizeof(header), sections, sizeof(sections));
  const size_t table_end = sizeof(header) + std::min<uint32_t>(header.section_count, 2) * sizeof(blob::SectionEntry);
  header.header_crc = blob::crc32(bytes.data(), table_end);
  std::memcpy(bytes.data(), &header, sizeof(header));
}

}  // namespace

TEST_CASE("the hand-written program is valid before it is broken", "[blob][verifier]") {
  const Rejection r = open_bytes(test::tiny_blob());
  INFO(r.message);
  CHECK(r.status == POCK_OK);
}

TEST_CASE("hostile programs with valid checksums are rejected by the verifier", "[blob][verifier]") {
  constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();
  const std::vector<HostileProgram> cases = {
      {"arena tensor past the arena", [](ProgramSpec& p) { p.tensors[tiny::kSum].offset = 4096; },
       POCK_ERR_INVALID_BLOB, "runs past the arena"},
      {"offset + size overflows 64 bits", [&](ProgramSpec& p) { p.tensors[tiny::kSum].offset = kMax - 3; },
       POCK_ERR_INVALID_BLOB, "runs past the arena"},
      {"persistent tensor past its region", [](ProgramSpec& p) { p.tensors[tiny::kY].offset = 240; },
       POCK_ERR_INVALID_BLOB, "runs past the persistent region"},
      {"weight past the weights section", [](ProgramSpec& p) { p.tensors[tiny::kBias].offset = p.weights.size(); },
       POCK_ERR_INVALID_BLOB, "runs past the weights section"},
      {"initial value past the weights section", [](ProgramSpec& p) { p.tensors[tiny::kScale].init_offset = kMax - 7; },
       POCK_ERR_INVALID_BLOB, "initial value runs past the weights section"},
      {"initial value on an arena tensor", [](ProgramSpec& p) { p.tensors[tiny::kSum].has_init = true; },
       POCK_ERR_INVALID_BLOB, "only persistent tensors carry an initial value"},
      {"misaligned offset", [](ProgramSpec& p) { p.tensors[tiny::kSum].offset = 2; },
       POCK_ERR_INVALID_BLOB, "not aligned"},
      {"nbytes larger than the shape", [](ProgramSpec& p) { p.tensors[tiny::kSum].nbytes = 1 << 20; },
       POCK_ERR_INVALID_BLOB, "does not match its shape"},
      {"shape whose size overflows", [](ProgramSpec& p) { p.tensors[tiny::kSum].shape = {1LL << 40, 1LL << 40}; },
       POCK_ERR_INVALID_BLOB, "size overflows"},
      {"negative dimension", [](ProgramSpec& p) { p.tensors[tiny::kSum].shape = {-2, -3}; },
       POCK_ERR_INVALID_BLOB, "negative dimension"},
      {"rank above 8", [](ProgramSpec& p) { p.tensors[tiny::kSum].shape = Shape(9, 1); },
       POCK_ERR_INVALID_BLOB, "rank 9"},
      {"unknown dtype", [](ProgramSpec& p) { p.tensors[tiny::kSum].dtype = static_cast<DType>(42); },
       POCK_ERR_INVALID_BLOB, "unknown dtype 42"},
      {"unknown storage", [](ProgramSpec& p) { p.tensors[tiny::kSum].storage = static_cast<Storage>(7); },
       POCK_ERR_INVALID_BLOB, "unknown storage"},
      {"op input index past the tensor table", [](ProgramSpec& p) { p.ops[tiny::kAddOp].inputs[0] = 99; },
       POCK_ERR_INVALID_BLOB, "input 0 is tensor 99, out of range"},
      {"negative op input index", [](ProgramSpec& p) { p.ops[tiny::kAddOp].inputs[1] = -5; },
       POCK_ERR_INVALID_BLOB, "input 1 is tensor -5, out of range"},
      {"op output index past the tensor table", [](ProgramSpec& p) { p.ops[tiny::kMulOp].outputs[0] = 1 << 30; },
       POCK_ERR_INVALID_BLOB, "output 0 is out of range"},
      {"op writing a read-only weight", [](ProgramSpec& p) { p.ops[tiny::kAddOp].outputs[0] = tiny::kBias; },
       POCK_ERR_INVALID_BLOB, "read-only weight"},
      {"unknown op", [](ProgramSpec& p) { p.ops[tiny::kMulOp].op = "LaunchMissiles"; },
       POCK_ERR_UNSUPPORTED_OP, "unknown op 'LaunchMissiles' at node 'mul'"},
      {"op with the wrong arity", [](ProgramSpec& p) { p.ops[tiny::kAddOp].inputs = {tiny::kX}; },
       POCK_ERR_INVALID_BLOB, "op 0 Add 'add'"},
      {"op output of the wrong shape", [](ProgramSpec& p) {
         p.tensors[tiny::kSum].shape = {3, 2};
       }, POCK_ERR_INVALID_BLOB, "but the op produces f32[2, 3]"},
      {"schedule naming a missing op", [](ProgramSpec& p) { p.functions[0].ops.push_back(7); },
       POCK_ERR_INVALID_BLOB, "function 'infer': op index out of range"},
      {"signature tensor out of range", [](ProgramSpec& p) { p.functions[0].inputs.push_back(1000); },
       POCK_ERR_INVALID_BLOB, "signature tensor out of range"},
      {"signature tensor in the arena", [](ProgramSpec& p) { p.functions[0].outputs = {tiny::kSum}; },
       POCK_ERR_INVALID_BLOB, "not in the persistent region"},
      {"loss that is not a scalar", [](ProgramSpec& p) { p.functions[0].loss = tiny::kY; },
       POCK_ERR_INVALID_BLOB, "loss must be a persistent f32 scalar"},
      {"function arena above the program's", [](ProgramSpec& p) { p.functions[0].arena_bytes = 1 << 20; },
       POCK_ERR_INVALID_BLOB, "arena larger than the program's"},
      {"two functions of one name", [](ProgramSpec& p) { p.functions.push_back(p.functions[0]); },
       POCK_ERR_INVALID_BLOB, "'infer' appears twice"},
      {"step counter of the wrong type", [](ProgramSpec& p) { p.step_tensor = tiny::kScale; },
       POCK_ERR_INVALID_BLOB, "step tensor must be a persistent i64 scalar"},
      {"step counter out of range", [](ProgramSpec& p) { p.step_tensor = 12345; },
       POCK_ERR_INVALID_BLOB, "step tensor out of range"},
      {"arena larger than its tensors need", [](ProgramSpec& p) {
         p.arena_bytes = 1 << 30;
         p.functions[0].arena_bytes = 1 << 30;
       }, POCK_ERR_INVALID_BLOB, "arena of 1073741824 bytes is larger than its tensors need (88)"},
      {"persistent region larger than its tensors need", [](ProgramSpec& p) { p.persistent_bytes = 4096; },
       POCK_ERR_INVALID_BLOB, "persistent region of 4096 bytes is larger than its tensors need (200)"},
      {"absurd region size", [](ProgramSpec& p) { p.arena_bytes = 1ULL << 60; },
       POCK_ERR_INVALID_BLOB, "region size is absurd"},
      // Memory spaces (a device backend's own memory): every tensor in a space that exists, blob
      // weights on the host, each op in one space, what the caller touches in host memory.
      {"tensor in a memory space that does not exist", [](ProgramSpec& p) { p.tensors[tiny::kSum].space = 3; },
       POCK_ERR_INVALID_BLOB, "memory space 3 does not exist"},
      {"blob weight in device memory", [](ProgramSpec& p) {
         p.spaces = {{"dev", 0, 0}};
         p.tensors[tiny::kBias].space = 1;
       }, POCK_ERR_INVALID_BLOB, "blob weights are host memory"},
      {"op reading one space and writing another", [](ProgramSpec& p) {
         p.spaces = {{"dev", 64, 0}};
         p.tensors[tiny::kSum].space = 1;
       }, POCK_ERR_INVALID_BLOB, "op 0 Add 'add': reads or writes tensors of two memory spaces"},
      {"device arena larger than its tensors need", [](ProgramSpec& p) {
         p.spaces = {{"dev", 1 << 30, 0}};
       }, POCK_ERR_INVALID_BLOB, "arena of memory space 1 of 1073741824 bytes is larger than its tensors need (0)"},
      {"absurd device region", [](ProgramSpec& p) { p.spaces = {{"dev", 0, 1ULL << 60}}; },
       POCK_ERR_INVALID_BLOB, "region size is absurd"},
      {"step counter in device memory", [](ProgramSpec& p) {
         p.spaces = {{"dev", 0, 64}};
         p.tensors[tiny::kStep].space = 1;
         p.tensors[tiny::kStep].offset = 0;
         p.persistent_bytes = 192;
       }, POCK_ERR_INVALID_BLOB, "step tensor must be a persistent i64 scalar in host memory"},
      {"op writing a device replica of a weight", [](ProgramSpec& p) { p.tensors[tiny::kSum].constant = true; },
       POCK_ERR_INVALID_BLOB, "read-only weight"},
  };
  for (const HostileProgram& c : cases) {
    ProgramSpec spec = test::tiny_program();
    c.break_it(spec);
    std::vector<uint8_t> bytes;
    REQUIRE(write_blob(spec, &bytes).is_ok());  // the writer trusts its caller; the loader must not
    const Rejection r = open_bytes(bytes);
    INFO(c.what << ": got '" << pock_status_string(r.status) << "': " << r.message);
    CHECK(r.status == c.expected);
    CHECK(r.message.find(c.message_part) != std::string::npos);
    // The C++ verifier (what pockc inspect uses) agrees with the runtime.
    BlobView view;
    const Status s = open_blob(bytes.data(), bytes.size(), VerifyOptions{}, &view);
    CHECK(static_cast<pock_status>(s.code()) == c.expected);
  }
}

TEST_CASE("forged headers with valid checksums are rejected", "[blob][verifier]") {
  struct ForgedHeader {
    const char* what;
    std::function<void(blob::Header&, blob::SectionEntry*)> edit;
    const char* message_part;
  };
  const std::vector<ForgedHeader> cases = {
      {"future format version", [](blob::Header& h, blob::SectionEntry*) { h.version = 2; }, "format version 2"},
      {"wrong header size", [](blob::Header& h, blob::SectionEntry*) { h.header_bytes = 128; }, "header size"},
      {"no sections", [](blob::Header& h, blob::SectionEntry*) { h.section_count = 0; }, "section count 0"},
      {"too many sections", [](blob::Header& h, blob::SectionEntry*) { h.section_count = 1000; }, "section count 1000"},
      {"section past the end", [](blob::Header&, blob::SectionEntry* s) { s[1].size += 1; }, "runs past the end"},
      {"section offset overflowing", [](blob::Header&, blob::SectionEntry* s) { s[0].offset = ~uint64_t{0} - 4; },
       "runs past the end"},
      {"section over the header", [](blob::Header&, blob::SectionEntry* s) { s[0].offset = 0; }, "overlaps the header"},
      {"one kind twice", [](blob::Header&, blob::SectionEntry* s) { s[1].kind = s[0].kind; }, "appears twice"},
      {"no weights section", [](blob::Header&, blob::SectionEntry* s) { s[1].kind = 99; }, "no weights section"},
      {"misaligned weights", [](blob::Header&, blob::SectionEntry* s) { s[1].offset -= 8; s[1].size += 8; },
       "not 64-byte aligned"},
      {"misaligned program", [](blob::Header&, blob::SectionEntry* s) { s[0].offset += 4; s[0].size -= 4; },
       "not 8-byte aligned"},
  };
  for (const ForgedHeader& c : cases) {
    std::vector<uint8_t> bytes = test::tiny_blob();
    REQUIRE_FALSE(bytes.empty());
    forge_header(bytes, c.edit);
    const Rejection r = open_bytes(bytes);
    INFO(c.what << ": got '" << pock_status_string(r.status) << "': " << r.message);
    CHECK(r.status == POCK_ERR_INVALID_BLOB);
    CHECK(r.message.find(c.message_part) != std::string::npos);
  }
}

TEST_CASE("a program section that is not a valid FlatBuffer is rejected", "[blob][verifier]") {
  std::vector<uint8_t> bytes = test::tiny_blob();
  blob::SectionEntry program;
  std::memcpy(&program, bytes.data() + sizeof(blob::Header), sizeof(program));
  // Point the root table far outside the section, then make the checksums agree again.
  const uint32_t root = 0x7FFFFFF0;
  std::memcpy(bytes.data() + program.offset, &root, sizeof(root));
  const uint32_t crc = blob::crc32(bytes.data() + program.offset, program.size);
  forge_header(bytes, [&](blob::Header&, blob::SectionEntry* s) { s[0].crc = crc; });
  const Rejection r = open_bytes(bytes);
  CHECK(r.status == POCK_ERR_INVALID_BLOB);
  CHECK(r.message == "program section fails FlatBuffer verification");
}

TEST_CASE("an arena larger than memory is refused with out-of-memory, not a crash", "[blob][verifier]") {
  ProgramSpec spec = test::tiny_program();
  // A 64 TiB tensor: consistent, within the verifier's limits, beyond any machine here.
  spec.tensors.push_back(test::tiny_tensor("huge", DType::kF32, {1 << 22, 1 << 22}, TensorKind::kActivation,
                                           Storage::kArena, 0));
  spec.arena_bytes = spec.tensors.back().nbytes;
  const Rejection r = open_bytes(test::write_tiny_blob(spec));
  INFO(r.message);
  CHECK(r.status == POCK_ERR_OUT_OF_MEMORY);
  CHECK(r.message.find("arena") != std::string::npos);
}

TEST_CASE("a blob at a misaligned address is refused, not read misaligned", "[blob][verifier]") {
  const std::vector<uint8_t> blob = test::tiny_blob();
  std::vector<uint8_t> storage(blob.size() + 8);
  uint8_t* misaligned = storage.data() + 4;  // vector storage is at least 8-byte aligned
  REQUIRE(reinterpret_cast<uintptr_t>(misaligned) % 8 == 4);
  std::memcpy(misaligned, blob.data(), blob.size());
  pock_engine* engine = nullptr;
  CHECK(pock_engine_open_buffer(misaligned, blob.size(), nullptr, &engine) == POCK_ERR_INVALID_BLOB);
  CHECK(std::string(pock_last_open_error()).find("not 8-byte aligned in memory") != std::string::npos);
  CHECK(engine == nullptr);
}
