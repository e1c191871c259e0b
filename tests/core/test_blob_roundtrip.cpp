// A program survives the blob unchanged: ProgramSpec -> write_blob -> open_blob ->
// read_program_spec gives back the same ProgramSpec, weights included, and the same bytes again.
#include <catch2/catch.hpp>

#include "blob/format.hpp"
#include "blob/reader.hpp"
#include "blob/writer.hpp"
#include "compiler/emit.hpp"
#include "support/tiny_blob.hpp"

using namespace pock;

namespace {

Result<ProgramSpec> round_trip(const ProgramSpec& spec, std::vector<uint8_t>* bytes) {
  POCK_RETURN_IF_ERROR(write_blob(spec, bytes));
  BlobView view;
  POCK_RETURN_IF_ERROR(open_blob(bytes->data(), bytes->size(), VerifyOptions{}, &view));
  return read_program_spec(view);
}

// The compiler's own ProgramSpec for a small graph: the path every compiled blob takes.
Result<ProgramSpec> emit_small_graph() {
  Graph g;
  const TensorId x = g.add_input("x", DType::kF32, {2, 4});
  const TensorId w = g.add_parameter_f32("layer.weight", {4}, {0.5f, -1.0f, 2.0f, 0.25f});
  const TensorId b = g.add_parameter_f32("layer.bias", {4}, {0.1f, 0.2f, 0.3f, 0.4f});
  POCK_ASSIGN_OR_RETURN(auto scaled, g.add_node("Mul", {x, w}, {}, "scale"));
  POCK_ASSIGN_OR_RETURN(auto shifted, g.add_node("Add", {scaled[0], b}, {}, "shift"));
  POCK_ASSIGN_OR_RETURN(auto act, g.add_node("Tanh", {shifted[0]}, {}, "act"));
  POCK_RETURN_IF_ERROR(g.mark_output(act[0], "y"));

  TrainingProgram program;
  program.graph = g;
  FunctionDef infer;
  infer.name = "infer";
  infer.nodes = g.nodes();
  infer.inputs = {x};
  infer.outputs = g.outputs();
  program.functions.push_back(infer);
  ProgramSpec spec;
  CompileReport report;
  POCK_RETURN_IF_ERROR(emit_program(program, CompileOptions{}, nullptr, &spec, &report));
  return spec;
}

}  // namespace

TEST_CASE("a compiled program round-trips through the blob", "[blob]") {
  auto spec = emit_small_graph();
  REQUIRE(spec.is_ok());
  REQUIRE_FALSE(spec->weights.empty());
  std::vector<uint8_t> bytes;
  auto back = round_trip(*spec, &bytes);
  REQUIRE(back.is_ok());
  CHECK(back->tensors == spec->tensors);
  CHECK(back->ops == spec->ops);
  CHECK(back->functions == spec->functions);
  CHECK(back->weights == spec->weights);
  CHECK(back.value() == spec.value());
}

TEST_CASE("every field and attribute kind round-trips", "[blob]") {
  ProgramSpec spec = test::tiny_program();
  // Attributes of every kind on an op whose schema ignores extra attributes.
  spec.ops[test::tiny::kActOp].attrs.set("note", std::string("leaky"));
  spec.ops[test::tiny::kActOp].attrs.set("count", int64_t{-7});
  spec.ops[test::tiny::kActOp].attrs.set("sizes", std::vector<int64_t>{1, -2, 1LL << 40});
  spec.ops[test::tiny::kActOp].attrs.set("gains", std::vector<double>{0.5, -1e-300, 3.25});
  spec.tensors[test::tiny::kScale].channels = 2;
  std::vector<uint8_t> bytes;
  auto back = round_trip(spec, &bytes);
  REQUIRE(back.is_ok());
  CHECK(back->ops[test::tiny::kActOp].attrs == spec.ops[test::tiny::kActOp].attrs);
  CHECK(back->tensors[test::tiny::kScale] == spec.tensors[test::tiny::kScale]);
  CHECK(back->step_tensor == test::tiny::kStep);
  CHECK(back->metadata == spec.metadata);
  CHECK(back.value() == spec);
}

TEST_CASE("writing a read-back program gives the same bytes", "[blob]") {
  std::vector<uint8_t> first;
  auto back = round_trip(test::tiny_program(), &first);
  REQUIRE(back.is_ok());
  std::vector<uint8_t> second;
  REQUIRE(write_blob(back.value(), &second).is_ok());
  CHECK(second == first);
}

TEST_CASE("the container layout is as documented", "[blob]") {
  const ProgramSpec spec = test::tiny_program();
  const std::vector<uint8_t> bytes = test::write_tiny_blob(spec);
  REQUIRE(bytes.size() > sizeof(blob::Header));
  blob::Header header;
  std::memcpy(&header, bytes.data(), sizeof(header));
  CHECK(std::memcmp(header.magic, "POCKBLOB", 8) == 0);
  CHECK(header.version == blob::kFormatVersion);
  CHECK(header.header_bytes == 64);
  CHECK(header.file_size == bytes.size());
  REQUIRE(header.section_count == 2);
  blob::SectionEntry sections[2];
  std::memcpy(sections, bytes.data() + sizeof(header), sizeof(sections));
  CHECK(sections[0].kind == blob::kSectionProgram);
  CHECK(sections[1].kind == blob::kSectionWeights);
  CHECK(sections[0].offset % 8 == 0);
  CHECK(sections[1].offset % blob::kWeightAlignment == 0);
  CHECK(sections[1].offset + sections[1].size == bytes.size());
  CHECK(sections[1].size == spec.weights.size());
  CHECK(std::memcmp(bytes.data() + sections[1].offset, spec.weights.data(), spec.weights.size()) == 0);
  // The program section is a FlatBuffer with the file identifier "PKPG" at bytes 4..7.
  CHECK(std::memcmp(bytes.data() + sections[0].offset + 4, "PKPG", 4) == 0);
  CHECK(sections[0].crc == blob::crc32(bytes.data() + sections[0].offset, sections[0].size));
  CHECK(sections[1].crc == blob::crc32(bytes.data() + sections[1].offset, sections[1].size));
}

TEST_CASE("weights are placed at 64-byte aligned offsets", "[blob]") {
  ProgramSpec spec;
  const uint8_t three[3] = {1, 2, 3};
  CHECK(spec.add_weight(three, 3) == 0);
  CHECK(spec.add_weight(three, 3) == 64);
  CHECK(spec.add_weight(three, 0) == 128);
  CHECK(spec.weights.size() == 128);
}
