// Backend switching: without a profile every op records the backend the runtime would bind; a
// profile from `pockc tune` makes each measured op prefer its fastest backend, and the runtime
// binds that backend when it can, else falls back. Also the per-op phases emit.cpp records.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include "compiler/backend_choice.hpp"
#include "compiler/backend_profile.hpp"
#include "runtime/backend_set.hpp"
#include "runtime/engine_core.hpp"
#include "small_cnn.hpp"

using namespace pock;
using namespace pock::test;

namespace {

std::vector<std::string> bound_backends(const std::vector<uint8_t>& blob, const std::string& caller_backend = "") {
  EngineOptions options;
  options.backend = caller_backend;
  auto core = EngineCore::open_buffer(blob.data(), blob.size(), options);
  INFO(core.status().to_string());
  REQUIRE(core.is_ok());
  return core.value()->op_backends();
}

nlohmann::json metadata_of(const ProgramSpec& spec) { return nlohmann::json::parse(spec.metadata); }

// A profile file that lives as long as the test case.
struct TempFile {
  explicit TempFile(const std::string& text)
      : path((std::filesystem::temp_directory_path() / ("pock_profile_" + std::to_string(::getpid()) + "_" +
                                                        std::to_string(counter++) + ".json")).string()) {
    std::ofstream(path) << text;
  }
  ~TempFile() { std::filesystem::remove(path); }
  std::string path;
  static inline int counter = 0;
};

// A profile that times `backend` at 1 us and every backend of this build at 1000 us for `signature`.
std::string profile_preferring(const std::string& signature, const std::string& backend) {
  BackendProfile p;
  p.backends = builtin_backend_names();
  ProfiledOp op;
  op.signature = signature;
  op.count = 1;
  for (const std::string& name : p.backends) op.timings.push_back({name, 1000.0});
  op.timings.push_back({backend, 1.0});  // listed twice when present: the lower median wins
  p.ops.push_back(std::move(op));
  return backend_profile_json(p);
}

// The first op that the heuristic gave to a fast backend (cpu, neon: not ref).
struct FastOp {
  size_t index = 0;
  std::string signature, backend;
};
FastOp first_fast_op(const ProgramSpec& spec) {
  for (size_t i = 0; i < spec.ops.size(); ++i) {
    if (!spec.ops[i].backend.empty() && spec.ops[i].backend != "ref") {
      return {i, op_signature(spec, spec.ops[i]), spec.ops[i].backend};
    }
  }
  FAIL("the heuristic gave every op to ref");
  return {};
}

}  // namespace

TEST_CASE("without a profile every op records the backend the runtime binds", "[backend_choice]") {
  const Recipe recipe = full_bp_recipe();
  const std::vector<uint8_t> blob = compile_or_fail(build_small_cnn(), &recipe, {});
  const ProgramSpec spec = spec_of(blob);
  const std::vector<std::string> bound = bound_backends(blob);
  REQUIRE(bound.size() == spec.ops.size());
  size_t fast = 0, ref = 0;
  for (size_t i = 0; i < spec.ops.size(); ++i) {
    INFO(spec.ops[i].op << " '" << spec.ops[i].name << "'");
    CHECK(spec.ops[i].backend == bound[i]);
    fast += spec.ops[i].backend != "ref";
    ref += spec.ops[i].backend == "ref";
  }
  CHECK(fast > 0);  // Linear, Conv2d and their gradients have cpu kernels
  CHECK(ref > 0);   // e.g. GlobalAvgPool has none
  const nlohmann::json choice = metadata_of(spec)["backend_choice"];
  CHECK(choice["heuristic_ops"].get<size_t>() == spec.ops.size());
  CHECK(choice["profiled_ops"].get<int>() == 0);
}

TEST_CASE("CompileOptions::backend is recorded for every op without a profile", "[backend_choice]") {
  CompileOptions options;
  options.backend = "ref";
  const ProgramSpec spec = spec_of(compile_or_fail(build_small_cnn(), nullptr, options));
  for (const OpSpec& op : spec.ops) CHECK(op.backend == "ref");
  CHECK(metadata_of(spec)["backend_choice"]["requested_ops"].get<size_t>() == spec.ops.size());
}

TEST_CASE("a profile makes each measured op prefer its fastest backend, and the engine binds it", "[backend_choice]") {
  const Recipe recipe = full_bp_recipe();
  const ProgramSpec heuristic = spec_of(compile_or_fail(build_small_cnn(), &recipe, {}));
  const FastOp target = first_fast_op(heuristic);
  TempFile profile(profile_preferring(target.signature, "ref"));

  CompileOptions options;
  options.profile_path = profile.path;
  const std::vector<uint8_t> blob = compile_or_fail(build_small_cnn(), &recipe, options);
  const ProgramSpec spec = spec_of(blob);
  REQUIRE(spec.ops.size() == heuristic.ops.size());
  size_t profiled = 0;
  for (size_t i = 0; i < spec.ops.size(); ++i) {
    INFO(spec.ops[i].op << " '" << spec.ops[i].name << "'");
    const bool measured = op_signature(spec, spec.ops[i]) == target.signature;
    CHECK(spec.ops[i].backend == (measured ? "ref" : heuristic.ops[i].backend));
    profiled += measured;
  }
  CHECK(spec.ops[target.index].backend == "ref");
  CHECK(metadata_of(spec)["backend_choice"]["profiled_ops"].get<size_t>() == profiled);
  CHECK(metadata_of(spec)["backend_choice"]["profile"] == profile.path);

  const std::vector<std::string> bound = bound_backends(blob);
  CHECK(bound[target.index] == "ref");
  // The caller's backend still outranks the blob's preference.
  CHECK(bound_backends(blob, target.backend)[target.index] == target.backend);
}

TEST_CASE("a profile preferring a backend this machine lacks falls back when binding", "[backend_choice]") {
  const ProgramSpec heuristic = spec_of(compile_or_fail(build_small_cnn(), nullptr, {}));
  const FastOp target = first_fast_op(heuristic);
  TempFile profile(profile_preferring(target.signature, "hexagon"));
  CompileOptions options;
  options.profile_path = profile.path;
  const std::vector<uint8_t> blob = compile_or_fail(build_small_cnn(), nullptr, options);
  CHECK(spec_of(blob).ops[target.index].backend == "hexagon");
  CHECK(bound_backends(blob)[target.index] == target.backend);  // the best score among the backends present
}

TEST_CASE("a profile that cannot be used is an error naming the file", "[backend_choice]") {
  CompileOptions options;
  options.profile_path = "/nonexistent/pock_profile.json";
  auto missing = compile(build_small_cnn(), nullptr, options);
  REQUIRE_FALSE(missing.is_ok());
  CHECK(missing.status().code() == Code::kIo);
  CHECK(missing.status().message().find("/nonexistent/pock_profile.json") != std::string::npos);

  TempFile wrong_format(R"({"format": "something-else", "version": 1, "ops": []})");
  options.profile_path = wrong_format.path;
  auto bad = compile(build_small_cnn(), nullptr, options);
  REQUIRE_FALSE(bad.is_ok());
  CHECK(bad.status().code() == Code::kInvalidArgument);
  CHECK(bad.status().message().find("'format'") != std::string::npos);

  auto negative = parse_backend_profile(
      R"({"format": "pock-backend-profile", "version": 1, "ops": [{"signature": "s", "median_us": {"cpu": -1}}]})", "p.json");
  REQUIRE_FALSE(negative.is_ok());
  CHECK(negative.status().message().find("ops[0].median_us.cpu") != std::string::npos);
}

TEST_CASE("a profile round-trips through its JSON and picks the lowest median", "[backend_choice]") {
  BackendProfile p;
  p.threads = 2;
  p.repeats = 7;
  p.backends = {"cpu", "ref"};
  p.ops.push_back({"Add(f32[2]) -> (f32[2]) {}", "Add", 3, {{"cpu", 2.5}, {"ref", 1.5}}, {}, {}});
  p.ops.push_back({"Neg(f32[2]) -> (f32[2]) {}", "Neg", 1, {{"ref", 4.0}}, {{"cpu", "prepare: no"}}, {}});
  p.ops.push_back({"Exp(f32[2]) -> (f32[2]) {}", "Exp", 1, {}, {{"ref", "execute: failed"}}, {}});
  auto back = parse_backend_profile(backend_profile_json(p), "p.json");
  REQUIRE(back.is_ok());
  CHECK(back->threads == 2);
  CHECK(back->repeats == 7);
  CHECK(back->backends == p.backends);
  REQUIRE(back->ops.size() == 3);
  CHECK(back->ops[0].count == 3);
  CHECK(back->ops[1].errors.at("cpu") == "prepare: no");
  const auto fastest = fastest_backends(back.value());
  CHECK(fastest.at("Add(f32[2]) -> (f32[2]) {}") == "ref");
  CHECK(fastest.at("Neg(f32[2]) -> (f32[2]) {}") == "ref");
  CHECK(fastest.count("Exp(f32[2]) -> (f32[2]) {}") == 0);  // nothing ran it: the heuristic decides
}

TEST_CASE("op signatures tell apart what changes a kernel's speed, not names", "[backend_choice]") {
  CompileOptions nchw;
  nchw.layout = false;  // the shapes below are NCHW; the layout pass would make c1..c3 NHWC
  const ProgramSpec spec = spec_of(compile_or_fail(build_small_cnn(), nullptr, nchw));
  std::string conv1, conv2;  // c1: dense 3 -> 8; c2: depthwise 8 -> 8
  for (const OpSpec& op : spec.ops) {
    if (op.name == "c1") conv1 = op_signature(spec, op);
    if (op.name == "c2") conv2 = op_signature(spec, op);
  }
  REQUIRE(!conv1.empty());
  REQUIRE(!conv2.empty());
  CHECK(conv1 != conv2);
  CHECK(conv1.rfind("Conv2d(f32[4,3,8,8], const f32[8,3,3,3]", 0) == 0);  // frozen weights are constant in inference
  CHECK(conv2.find("groups=8") != std::string::npos);
  CHECK(conv1.find("c1") == std::string::npos);
}

TEST_CASE("emit records each op's phase in the metadata", "[backend_choice]") {
  const Recipe recipe = full_bp_recipe();
  const ProgramSpec spec = spec_of(compile_or_fail(build_small_cnn(), &recipe, {}));
  const std::string phases = metadata_of(spec)["op_phases"].get<std::string>();
  REQUIRE(phases.size() == spec.ops.size());
  const FunctionSpec* infer = find_function(spec, "infer");
  const FunctionSpec* train = find_function(spec, "train");
  REQUIRE(infer);
  REQUIRE(train);
  for (uint32_t op : infer->ops) CHECK(phases[op] == 'F');
  std::map<char, size_t> in_train;
  for (uint32_t op : train->ops) {
    const char p = phases[op];
    ++in_train[p];
    const std::string& kind = spec.ops[op].op;
    if (kind == "SgdUpdate") CHECK(p == 'U');
    if (kind == "Conv2dGradWeight" || kind == "LinearWeightGrad") CHECK(p == 'B');
    if (kind == "SoftmaxCrossEntropy") CHECK(p == 'L');
  }
  CHECK(in_train['F'] > 0);
  CHECK(in_train['L'] > 0);
  CHECK(in_train['B'] > 0);
  CHECK(in_train['U'] > 0);
}
