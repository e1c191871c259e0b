// The C API end to end without checkpoints: open a blob file (memory-mapped), query tensors, set
// inputs, infer, read outputs and parameters, and get a clean status and message for every misuse.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdio>
#include <set>
#include <string>

#include "pock/pock.h"
#include "support/tiny_blob.hpp"

using namespace pock;
namespace tiny = pock::test::tiny;

namespace {

// A blob file in the temp directory, removed when the test ends.
struct TempBlobFile {
  std::string path;
  explicit TempBlobFile(const std::vector<uint8_t>& bytes) {
    const char* dir = std::getenv("TMPDIR");
    path = std::string(dir ? dir : "/tmp") + "/pock_c_api_" + std::to_string(::getpid()) + ".pock";
    if (FILE* f = std::fopen(path.c_str(), "wb")) {
      std::fwrite(bytes.data(), 1, bytes.size(), f);
      std::fclose(f);
    }
  }
  ~TempBlobFile() { std::remove(path.c_str()); }
};

struct EngineCloser {
  pock_engine* engine = nullptr;
  ~EngineCloser() { pock_engine_close(engine); }
};

std::vector<float> run_tiny(pock_engine* engine) {
  std::vector<float> out(6, -999.0f);
  if (pock_engine_set_input(engine, "x", tiny::kInput.data(), 6 * sizeof(float)) != POCK_OK) return {};
  if (pock_engine_infer(engine) != POCK_OK) return {};
  if (pock_engine_get_output(engine, "y", out.data(), 6 * sizeof(float)) != POCK_OK) return {};
  return out;
}

}  // namespace

TEST_CASE("a blob file is opened, inspected and run through the C API", "[c_api]") {
  TempBlobFile file(test::tiny_blob());
  pock_engine_options options;
  pock_engine_options_init(&options);
  CHECK(options.struct_size == sizeof(pock_engine_options));
  CHECK(options.rollback_on_failure == 1);
  options.num_threads = 1;
  options.backend = "ref";
  EngineCloser e;
  REQUIRE(pock_engine_open_file(file.path.c_str(), &options, &e.engine) == POCK_OK);
  REQUIRE(e.engine != nullptr);
  CHECK(std::string(pock_last_open_error()).empty());
  // The mapping outlives the file's name: weights are read from the mapping, not re-opened.
  std::remove(file.path.c_str());

  pock_tensor_info info{};
  REQUIRE(pock_engine_tensor_info(e.engine, "x", &info) == POCK_OK);
  CHECK(info.dtype == POCK_F32);
  CHECK(info.rank == 2);
  CHECK(info.dims[0] == 2);
  CHECK(info.dims[1] == 3);
  CHECK(info.dims[2] == 0);
  CHECK(info.nbytes == 24);
  REQUIRE(pock_engine_tensor_info(e.engine, "step", &info) == POCK_OK);
  CHECK(info.dtype == POCK_I64);
  CHECK(info.rank == 0);

  CHECK(pock::test::nearly_equal(run_tiny(e.engine), tiny::kExpectedOutput));
  CHECK(std::string(pock_engine_last_error(e.engine)).empty());

  // An inference-only blob: no training, no steps.
  CHECK(pock_engine_can_train(e.engine) == 0);
  CHECK(pock_engine_step(e.engine) == 0);
  float loss = 0;
  CHECK(pock_engine_train_step(e.engine, &loss) == POCK_ERR_NOT_FOUND);
  CHECK(std::string(pock_engine_last_error(e.engine)).find("no training function") != std::string::npos);
  CHECK(pock_engine_eval_step(e.engine, &loss) == POCK_ERR_NOT_FOUND);
}

TEST_CASE("parameters are read and written by name", "[c_api]") {
  const std::vector<uint8_t> blob = test::tiny_blob();
  EngineCloser e;
  REQUIRE(pock_engine_open_buffer(blob.data(), blob.size(), nullptr, &e.engine) == POCK_OK);

  std::vector<float> scale(3);
  REQUIRE(pock_engine_get_parameter(e.engine, "scale", scale.data(), 12) == POCK_OK);
  CHECK(scale == tiny::kScaleValues);
  std::vector<float> bias(3);
  REQUIRE(pock_engine_get_parameter(e.engine, "bias", bias.data(), 12) == POCK_OK);
  CHECK(bias == tiny::kBiasValues);

  const std::vector<float> ones = {1, 1, 1};
  REQUIRE(pock_engine_set_parameter(e.engine, "scale", ones.data(), 12) == POCK_OK);
  // (x + bias) * 1 = {2, -1, 1.5, -2, 3, -0.5}, then LeakyRelu(0.1).
  CHECK(pock::test::nearly_equal(run_tiny(e.engine), std::vector<float>{2.0f, -0.1f, 1.5f, -0.2f, 3.0f, -0.05f}));

  // A frozen parameter lives in the read-only weights: it cannot be set.
  CHECK(pock_engine_set_parameter(e.engine, "bias", ones.data(), 12) == POCK_ERR_INVALID_ARGUMENT);
  CHECK(std::string(pock_engine_last_error(e.engine)).find("frozen") != std::string::npos);
  CHECK(pock_engine_get_parameter(e.engine, "x", scale.data(), 12) == POCK_ERR_NOT_FOUND);
  CHECK(pock_engine_set_parameter(e.engine, "scale", ones.data(), 8) == POCK_ERR_SHAPE_MISMATCH);
}

TEST_CASE("every misuse gives its own status and a message", "[c_api]") {
  const std::vector<uint8_t> blob = test::tiny_blob();
  EngineCloser e;
  REQUIRE(pock_engine_open_buffer(blob.data(), blob.size(), nullptr, &e.engine) == POCK_OK);
  std::vector<float> buffer(6);
  auto last_error = [&] { return std::string(pock_engine_last_error(e.engine)); };

  CHECK(pock_engine_set_input(e.engine, "x", buffer.data(), 20) == POCK_ERR_SHAPE_MISMATCH);
  CHECK(last_error().find("'x'") != std::string::npos);
  CHECK(pock_engine_set_input(e.engine, "nope", buffer.data(), 24) == POCK_ERR_NOT_FOUND);
  CHECK(last_error().find("'nope'") != std::string::npos);
  CHECK(pock_engine_set_input(e.engine, "y", buffer.data(), 24) == POCK_ERR_INVALID_ARGUMENT);
  CHECK(pock_engine_set_input(e.engine, "x", nullptr, 24) == POCK_ERR_INVALID_ARGUMENT);
  CHECK(pock_engine_set_input(e.engine, nullptr, buffer.data(), 24) == POCK_ERR_INVALID_ARGUMENT);
  CHECK(pock_engine_get_output(e.engine, "y", buffer.data(), 4) == POCK_ERR_SHAPE_MISMATCH);
  CHECK(pock_engine_get_output(e.engine, "sum", buffer.data(), 24) == POCK_ERR_INVALID_ARGUMENT);
  CHECK(last_error().find("intermediate") != std::string::npos);
  CHECK(pock_engine_tensor_info(e.engine, "x", nullptr) == POCK_ERR_INVALID_ARGUMENT);
  // Running before an input is set would compute on stale or zero data: refused, naming it.
  CHECK(pock_engine_infer(e.engine) == POCK_ERR_INVALID_ARGUMENT);
  CHECK(last_error().find("'x' was never set") != std::string::npos);
  REQUIRE(pock_engine_set_input(e.engine, "x", buffer.data(), 24) == POCK_OK);
  // A success clears the previous message.
  CHECK(pock_engine_infer(e.engine) == POCK_OK);
  CHECK(last_error().empty());

  // Calls on no engine fail cleanly instead of crashing.
  CHECK(pock_engine_infer(nullptr) == POCK_ERR_INVALID_ARGUMENT);
  CHECK(pock_engine_set_input(nullptr, "x", buffer.data(), 24) == POCK_ERR_INVALID_ARGUMENT);
  CHECK(std::string(pock_engine_last_error(nullptr)).empty());
  CHECK(pock_engine_step(nullptr) == 0);
  CHECK(pock_engine_can_train(nullptr) == 0);
  pock_engine_close(nullptr);
}

TEST_CASE("failed opens report why", "[c_api]") {
  pock_engine* engine = reinterpret_cast<pock_engine*>(0x1);
  CHECK(pock_engine_open_file("/nonexistent/dir/model.pock", nullptr, &engine) == POCK_ERR_IO);
  CHECK(engine == nullptr);
  CHECK(std::string(pock_last_open_error()).find("/nonexistent/dir/model.pock") != std::string::npos);
  CHECK(pock_engine_open_file(nullptr, nullptr, &engine) == POCK_ERR_INVALID_ARGUMENT);
  CHECK(pock_engine_open_buffer(nullptr, 10, nullptr, &engine) == POCK_ERR_INVALID_ARGUMENT);
  const std::vector<uint8_t> blob = test::tiny_blob();
  CHECK(pock_engine_open_buffer(blob.data(), blob.size(), nullptr, nullptr) == POCK_ERR_INVALID_ARGUMENT);

  TempBlobFile empty(std::vector<uint8_t>{});
  CHECK(pock_engine_open_file(empty.path.c_str(), nullptr, &engine) == POCK_ERR_INVALID_BLOB);
  CHECK(std::string(pock_last_open_error()).find("empty") != std::string::npos);
  TempBlobFile not_a_blob(std::vector<uint8_t>(100, 'z'));
  CHECK(pock_engine_open_file(not_a_blob.path.c_str(), nullptr, &engine) == POCK_ERR_INVALID_BLOB);
  CHECK(std::string(pock_last_open_error()) == "not a PockEngine blob (bad magic)");
}

TEST_CASE("two engines on one blob are independent", "[c_api]") {
  const std::vector<uint8_t> blob = test::tiny_blob();
  EngineCloser a, b;
  REQUIRE(pock_engine_open_buffer(blob.data(), blob.size(), nullptr, &a.engine) == POCK_OK);
  REQUIRE(pock_engine_open_buffer(blob.data(), blob.size(), nullptr, &b.engine) == POCK_OK);
  const std::vector<float> zeros = {0, 0, 0};
  REQUIRE(pock_engine_set_parameter(a.engine, "scale", zeros.data(), 12) == POCK_OK);
  CHECK(pock::test::nearly_equal(run_tiny(b.engine), tiny::kExpectedOutput));
  CHECK(pock::test::nearly_equal(run_tiny(a.engine), std::vector<float>(6, 0.0f)));
}

TEST_CASE("status names are distinct", "[c_api]") {
  std::set<std::string> names;
  for (int s = POCK_OK; s <= POCK_ERR_INTERNAL; ++s) {
    const char* name = pock_status_string(static_cast<pock_status>(s));
    REQUIRE(name != nullptr);
    names.insert(name);
  }
  CHECK(names.size() == static_cast<size_t>(POCK_ERR_INTERNAL) + 1);
  CHECK(pock_status_string(static_cast<pock_status>(1234)) != nullptr);
}
