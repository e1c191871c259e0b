// Hostile edits of a compiled blob's block-quantized weights (recipe frozen_weights "source"),
// checksums recomputed by the writer as a forger would: a LinearQ / GatherQ whose weight rows are
// shorter than its format and in_features need, or whose attributes no longer describe the rows,
// is refused when the engine opens, before any kernel reads past the weight.
#include <catch2/catch.hpp>

#include <functional>
#include <string>

#include "blob/reader.hpp"
#include "blob/writer.hpp"
#include "pock/compiler/compiler.hpp"
#include "pock/compiler/gguf.hpp"
#include "pock/pock.h"
#include "support/edited_blob.hpp"

using namespace pock;
using namespace pock::test;

namespace {

ProgramSpec compiled_spec() {
  auto g = import_gguf(std::string(POCK_TESTS_DIR) + "/frontend/gguf/tiny_llama.gguf", {1, 4});
  REQUIRE(g.is_ok());
  Recipe recipe;
  recipe.loss.logits = "logits";
  recipe.trainable = {TrainableRule{"model.layers.1.*", "", false, -1, -1}};
  recipe.frozen_weights = "source";
  auto blob = compile(g.value(), &recipe);
  REQUIRE(blob.is_ok());
  return program_of(blob.value());
}

}  // namespace

TEST_CASE("the unedited source-quantized blob opens", "[blob][verifier][hostile][block_quant]") {
  const auto [status, message] = open_edited(compiled_spec(), [](ProgramSpec&) {});
  INFO(message);
  CHECK(status == POCK_OK);
}

TEST_CASE("block-quantized weight rows shorter than the format needs are refused", "[blob][verifier][hostile][block_quant]") {
  const ProgramSpec spec = compiled_spec();
  for (const char* op : {"LinearQ", "GatherQ"}) {
    INFO(op);
    const auto [status, message] = open_edited(spec, [&](ProgramSpec& p) {
      OpSpec& o = find_op(p, op);
      TensorSpec& w = p.tensors[static_cast<size_t>(o.inputs[op == std::string("GatherQ") ? 0 : 1])];
      w.shape[1] -= 2;  // a shorter row, and the byte count that goes with it
      w.nbytes = static_cast<uint64_t>(w.shape[0] * w.shape[1]);
    });
    CHECK(status == POCK_ERR_INVALID_BLOB);
    CHECK_THAT(message, Catch::Contains(op) && Catch::Contains("the weight must be u8"));
  }
}

TEST_CASE("block_quant attributes that no longer describe the weight rows are refused", "[blob][verifier][hostile][block_quant]") {
  const ProgramSpec spec = compiled_spec();
  const std::vector<std::pair<std::string, AttrValue>> edits = {
      {"in_features", int64_t{128}}, {"in_features", int64_t{-32}}, {"format", std::string("q8_0")},
      {"format", std::string("q2_k")}};
  for (const auto& [name, value] : edits) {
    INFO(name);
    const auto [status, message] = open_edited(spec, [&](ProgramSpec& p) {
      for (OpSpec& o : p.ops) {
        if (o.op == "LinearQ" && o.attrs.get_string("format", "") == "q4_1") {
          o.attrs.set(name, value);
          return;
        }
      }
      FAIL("no q4_1 LinearQ");
    });
    CHECK(status == POCK_ERR_INVALID_BLOB);
    CHECK_THAT(message, Catch::Contains("LinearQ"));
  }
}
