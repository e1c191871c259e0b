// Hostile edits of compiled blobs (checksums recomputed by the writer, as a forger would): the
// verifier rejects each before any schema or kernel code reads the edited field. These are the
// shapes of blobs that once crashed pock_engine_open_* (issue: hostile input never crashes).
#include <catch2/catch.hpp>

#include <cstring>
#include <functional>
#include <string>

#include "blob/reader.hpp"
#include "blob/writer.hpp"
#include "pock/pock.h"
#include "support/edited_blob.hpp"
#include "train/mlp_model.hpp"

using namespace pock;
using namespace pock::test;

namespace {

ProgramSpec compiled_spec(const Recipe& recipe) {
  auto blob = compile(build_mlp(), &recipe);
  REQUIRE(blob.is_ok());
  return program_of(blob.value());
}

}  // namespace

TEST_CASE("an omitted input of a variadic op is rejected, not read", "[blob][verifier][hostile]") {
  Recipe recipe = classifier_recipe();
  recipe.clip_grad_norm = 1.0;  // GlobalNormClipScale reads every gradient
  const ProgramSpec spec = compiled_spec(recipe);
  for (size_t input : {size_t{0}, size_t{2}}) {
    INFO("input " << input);
    const auto [status, message] = open_edited(spec, [&](ProgramSpec& p) { find_op(p, "GlobalNormClipScale").inputs.at(input) = -1; });
    CHECK(status == POCK_ERR_INVALID_BLOB);
    CHECK_THAT(message, Catch::Contains("GlobalNormClipScale") && Catch::Contains("required input"));
  }
}

TEST_CASE("an omitted required input of a fixed-arity op is rejected", "[blob][verifier][hostile]") {
  const ProgramSpec spec = compiled_spec(classifier_recipe());
  const auto [status, message] = open_edited(spec, [](ProgramSpec& p) { find_op(p, "AdamUpdate").inputs.at(1) = -1; });
  CHECK(status == POCK_ERR_INVALID_BLOB);
  CHECK_THAT(message, Catch::Contains("required input 1 is missing"));
}

TEST_CASE("a step counter that starts negative is rejected", "[blob][verifier][hostile]") {
  const ProgramSpec spec = compiled_spec(classifier_recipe());
  REQUIRE(spec.step_tensor >= 0);
  const auto [status, message] = open_edited(spec, [](ProgramSpec& p) {
    TensorSpec& step = p.tensors[static_cast<size_t>(p.step_tensor)];
    step.has_init = true;
    step.init_offset = p.weights.size();
    p.weights.resize(p.weights.size() + 64, 0);
    const int64_t negative = -5;
    std::memcpy(p.weights.data() + step.init_offset, &negative, sizeof(negative));
  });
  CHECK(status == POCK_ERR_INVALID_BLOB);
  CHECK_THAT(message, Catch::Contains("negative step"));
}
