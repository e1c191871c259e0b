// The safetensors reader against the `safetensors` package: a file it wrote
// (tests/frontend/safetensors/make_fixture.py) with one tensor per dtype, whose f32 values torch
// gives; our conversion must give the same floats. And hostile files made here — truncations, a
// header length beyond the file, offsets past the end, overlaps, holes, shape products that
// overflow, unknown or mistyped dtypes, bad JSON, repeated keys — are errors, never crashes or
// allocations the file cannot back.
#include <catch2/catch.hpp>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "frontend/safetensors/safetensors_file.hpp"
#include "frontend/safetensors_files.hpp"
#include "models/zoo_reference.hpp"
#include "support/file_bytes.hpp"

using namespace pock;
using test::safetensors_bytes;

namespace {

Status parse_status(const std::vector<uint8_t>& bytes) { return safetensors::File::parse(bytes.data(), bytes.size()).status(); }

// The error of a file whose header is `header` over `data_size` zero bytes; it must name `needle`.
void check_refused(const std::string& header, size_t data_size, const std::string& needle) {
  const Status s = parse_status(safetensors_bytes(header, std::vector<uint8_t>(data_size, 0)));
  INFO(header << " -> " << s.to_string());
  REQUIRE_FALSE(s.is_ok());
  CHECK(s.message().find(needle) != std::string::npos);
}

}  // namespace

TEST_CASE("safetensors: every dtype converts to the floats torch gives", "[frontend][safetensors]") {
  const std::vector<uint8_t> bytes = test::read_file_bytes(test::kSafetensorsDir + "/dtypes.safetensors");
  auto expected = test::read_ref_tensors(test::kSafetensorsDir + "/dtypes_expected.bin");
  REQUIRE(expected.is_ok());
  auto f = safetensors::File::parse(bytes.data(), bytes.size());
  INFO(f.status().to_string());
  REQUIRE(f.is_ok());
  CHECK(f->metadata().at("format") == "pt");
  REQUIRE(f->tensors().size() == 5);
  for (const auto& [name, want] : expected.value()) {
    INFO(name);
    const safetensors::TensorInfo* t = f->find(name);
    REQUIRE(t);
    CHECK(t->shape == std::vector<uint64_t>(want.shape.begin(), want.shape.end()));
    std::vector<float> got;
    REQUIRE(safetensors::to_f32(*f, *t, &got).is_ok());
    CHECK(got == want.as<float>());  // exact: F16 and BF16 widen to f32 without rounding
  }
  CHECK(f->find("bf16")->dtype == "BF16");
  CHECK(f->find("empty")->elements == 0);
  // An integer tensor is readable as a tensor but is no weight: the error names it and its dtype.
  std::vector<float> values;
  const Status s = safetensors::to_f32(*f, *f->find("i64"), &values);
  REQUIRE_FALSE(s.is_ok());
  CHECK(s.message().find("'i64'") != std::string::npos);
  CHECK(s.message().find("I64") != std::string::npos);
}

TEST_CASE("safetensors: every truncation and random flips are errors or clean reads", "[frontend][safetensors][hostile]") {
  const std::vector<uint8_t> bytes = test::read_file_bytes(test::kSafetensorsDir + "/dtypes.safetensors");
  for (size_t n = 0; n < bytes.size(); ++n) {
    const std::vector<uint8_t> cut(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(n));
    INFO("first " << n << " bytes");
    CHECK_FALSE(parse_status(cut).is_ok());  // the data must tile exactly: any cut is short
  }
  std::mt19937 rng(3);
  for (int round = 0; round < 2000; ++round) {
    std::vector<uint8_t> mutated = bytes;
    for (int k = 0; k < 3; ++k) mutated[rng() % mutated.size()] ^= static_cast<uint8_t>(1u << (rng() % 8));
    auto f = safetensors::File::parse(mutated.data(), mutated.size());
    if (!f.is_ok()) continue;
    std::vector<float> values;
    for (const safetensors::TensorInfo& t : f->tensors()) (void)safetensors::to_f32(*f, t, &values);
  }
}

TEST_CASE("safetensors: hostile headers are refused naming what is wrong", "[frontend][safetensors][hostile]") {
  SECTION("shorter than the length field, and a header length beyond the file") {
    CHECK_FALSE(parse_status({1, 0, 0}).is_ok());
    std::vector<uint8_t> bytes = safetensors_bytes("{}", {});
    bytes[0] = 3;  // claims 3 header bytes; the file has 2
    CHECK(parse_status(bytes).message().find("larger than the file") != std::string::npos);
    bytes[7] = 0x80;  // 2^63 + 3
    CHECK(parse_status(bytes).message().find("larger than the file") != std::string::npos);
  }
  SECTION("offsets past the end of the data, and a 4 GiB tensor in a small file") {
    check_refused(R"({"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}})", 8, "not within");
    check_refused(R"({"a":{"dtype":"F32","shape":[1073741824],"data_offsets":[0,4294967296]}})", 64, "not within");
    check_refused(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[8,0]}})", 8, "not within");
  }
  SECTION("overlapping ranges, holes, bytes after the last tensor") {
    check_refused(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
                  12, "overlap");
    check_refused(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"b":{"dtype":"F32","shape":[1],"data_offsets":[8,12]}})",
                  12, "belong to no tensor");
    check_refused(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})", 6, "belong to no tensor");
  }
  SECTION("shape products that overflow, and sizes that do not match the shape") {
    check_refused(R"({"a":{"dtype":"F32","shape":[4294967296,4294967296,2],"data_offsets":[0,0]}})", 0, "overflows");
    // 2^62 elements of 4 bytes: the element count fits, the byte count does not.
    check_refused(R"({"a":{"dtype":"F32","shape":[4611686018427387904],"data_offsets":[0,0]}})", 0, "do not hold");
    check_refused(R"({"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", 8, "do not hold");
    check_refused(R"({"a":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}})", 4, "shape entry");
    check_refused(R"({"a":{"dtype":"F32","shape":[1.0],"data_offsets":[0,4]}})", 4, "shape entry");
    check_refused(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[-4,0]}})", 4, "data_offsets");
  }
  SECTION("unknown and mistyped dtypes") {
    check_refused(R"({"a":{"dtype":"F33","shape":[1],"data_offsets":[0,4]}})", 4, "unknown dtype 'F33'");
    check_refused(R"({"a":{"dtype":4,"shape":[1],"data_offsets":[0,4]}})", 4, "no dtype string");
    check_refused(R"({"a":{"shape":[1],"data_offsets":[0,4]}})", 4, "no dtype string");
    check_refused(R"({"a":{"dtype":"F32","shape":1,"data_offsets":[0,4]}})", 4, "no shape array");
  }
  SECTION("bad JSON, a header that is not an object, repeated keys, deep nesting, odd metadata") {
    check_refused(R"({"a":{"dtype":"F32")", 0, "not valid JSON");
    check_refused("[1, 2]", 0, "not a JSON object");
    check_refused(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
                  8, "repeats the key 'a'");
    check_refused(R"({"a":{"dtype":"F32","dtype":"F16","shape":[1],"data_offsets":[0,4]}})", 4, "repeats the key 'dtype'");
    check_refused(R"({"__metadata__":{"x":1}})", 0, "__metadata__");
    check_refused(R"({"a":7})", 0, "not an object");
    check_refused(std::string(100, '[') + std::string(100, ']'), 0, "nests deeper");
  }
}

TEST_CASE("safetensors: a file written here reads back, zero-size tensors included", "[frontend][safetensors]") {
  const std::vector<uint8_t> bytes =
      test::safetensors_bytes({test::f32_tensor("w", {2, 3}, 1.5f), test::f32_tensor("none", {0, 7}), test::f32_tensor("b", {3}, -2.0f)});
  auto f = safetensors::File::parse(bytes.data(), bytes.size());
  INFO(f.status().to_string());
  REQUIRE(f.is_ok());
  std::vector<float> values;
  REQUIRE(safetensors::to_f32(*f, *f->find("b"), &values).is_ok());
  CHECK(values == std::vector<float>{-2.0f, -2.0f, -2.0f});
  CHECK(f->find("none")->elements == 0);
}
