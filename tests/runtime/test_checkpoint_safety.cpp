// Checkpoints under hostile conditions: a saving process killed at random points, a full disk,
// a directory that cannot be written or does not exist, a forged step. A valid checkpoint always
// remains, a failed save changes nothing, and temporaries of killed savers are cleaned up.
// POCK_KILL_ROUNDS sets the kills (default 40; benchmarks/checkpoint_kill.sh runs hundreds).
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <thread>

#include "blob/format.hpp"
#include "pock/compiler/builder.hpp"
#include "pock/compiler/compiler.hpp"
#include "pock/pock.h"

using namespace pock;
namespace fs = std::filesystem;

namespace {

// A model with a few MB of trainable state, so that a save takes long enough to be killed
// in the middle of its writes.
std::vector<uint8_t> wide_blob() {
  ModelBuilder b;
  const TensorId x = b.input("x", DType::kF32, {4, 256});
  TensorId h = b.relu(b.named("fc1").linear(x, b.parameter_kaiming_uniform("fc1.weight", {1024, 256}, 1)));
  b.output(b.named("fc2").linear(h, b.parameter_kaiming_uniform("fc2.weight", {8, 1024}, 2)), "logits");
  Recipe recipe;
  recipe.loss.logits = "logits";
  recipe.optimizer.type = "adam";
  auto graph = b.finish();
  REQUIRE(graph.is_ok());
  auto blob = compile(graph.value(), &recipe);
  REQUIRE(blob.is_ok());
  return std::move(blob.value());
}

struct OpenEngine {
  pock_engine* e = nullptr;
  explicit OpenEngine(const std::vector<uint8_t>& blob) {
    pock_engine_options o;
    pock_engine_options_init(&o);
    o.num_threads = 1;  // no worker threads: a forked child runs the engine on its only thread
    REQUIRE(pock_engine_open_buffer(blob.data(), blob.size(), &o, &e) == POCK_OK);
    std::vector<float> x(4 * 256, 0.5f);
    std::vector<int64_t> label = {1, 2, 3, 4};
    REQUIRE(pock_engine_set_input(e, "x", x.data(), x.size() * 4) == POCK_OK);
    REQUIRE(pock_engine_set_input(e, "label", label.data(), label.size() * 8) == POCK_OK);
  }
  ~OpenEngine() { pock_engine_close(e); }
};

fs::path fresh_dir(const char* name) {
  const fs::path d = fs::temp_directory_path() / (std::string("pock-ckpt-") + name + "-" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

std::vector<char> file_bytes(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

int temporaries(const fs::path& dir) {
  int n = 0;
  for (const auto& e : fs::directory_iterator(dir)) n += e.path().filename().string().find(".tmp.") != std::string::npos;
  return n;
}

pid_t dead_pid() {
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ::waitpid(child, nullptr, 0);
  return child;
}

}  // namespace

TEST_CASE("a saving process killed at random points always leaves a loadable checkpoint", "[checkpoint][kill]") {
  const std::vector<uint8_t> blob = wide_blob();
  const fs::path dir = fresh_dir("kill");
  const std::string path = (dir / "model.ckpt").string();
  {
    OpenEngine first(blob);
    REQUIRE(pock_engine_save_checkpoint(first.e, path.c_str()) == POCK_OK);
  }
  const char* env = std::getenv("POCK_KILL_ROUNDS");
  const int rounds = env ? std::atoi(env) : 40;
  std::mt19937 gen(7);
  int loaded = 0, mid_save = 0;
  for (int round = 0; round < rounds; ++round) {
    const pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {  // trains and saves until killed
      OpenEngine saver(blob);
      for (;;) {
        float loss = 0;
        if (pock_engine_train_step(saver.e, &loss) != POCK_OK) ::_exit(3);
        if (pock_engine_save_checkpoint(saver.e, path.c_str()) != POCK_OK) ::_exit(4);
      }
    }
    std::this_thread::sleep_for(std::chrono::microseconds(std::uniform_int_distribution<int>(2000, 60000)(gen)));
    ::kill(child, SIGKILL);
    int status = 0;
    ::waitpid(child, &status, 0);
    REQUIRE(WIFSIGNALED(status));  // killed, not failed on its own
    mid_save += temporaries(dir) > 0;
    OpenEngine reader(blob);
    if (pock_engine_load_checkpoint(reader.e, path.c_str()) == POCK_OK) ++loaded;
    else FAIL_CHECK("round " << round << ": " << pock_engine_last_error(reader.e));
    CHECK(temporaries(dir) <= 1);  // each saver removes the leftovers of the killed ones
  }
  CHECK(loaded == rounds);
  WARN(rounds << " kills: " << loaded << " checkpoints loaded, " << mid_save << " kills landed mid-save");
  OpenEngine last(blob);
  REQUIRE(pock_engine_save_checkpoint(last.e, path.c_str()) == POCK_OK);
  CHECK(temporaries(dir) == 0);
  fs::remove_all(dir);
}

TEST_CASE("a save removes the temporaries of dead savers and keeps those of live ones", "[checkpoint]") {
  const std::vector<uint8_t> blob = wide_blob();
  const fs::path dir = fresh_dir("stale");
  const fs::path path = dir / "model.ckpt";
  const fs::path dead = dir / ("model.ckpt.tmp." + std::to_string(dead_pid()));
  const fs::path live = dir / ("model.ckpt.tmp." + std::to_string(::getppid()));
  const fs::path other = dir / ("other.ckpt.tmp." + std::to_string(dead_pid()));
  for (const fs::path& p : {dead, live, other}) std::ofstream(p) << "partial";
  OpenEngine engine(blob);
  REQUIRE(pock_engine_save_checkpoint(engine.e, path.c_str()) == POCK_OK);
  CHECK_FALSE(fs::exists(dead));
  CHECK(fs::exists(live));   // its process still runs: it may be saving right now
  CHECK(fs::exists(other));  // another checkpoint's business
  fs::remove_all(dir);
}

TEST_CASE("a full disk fails the save and keeps the old checkpoint", "[checkpoint]") {
  const std::vector<uint8_t> blob = wide_blob();
  const fs::path dir = fresh_dir("full");
  const std::string path = (dir / "model.ckpt").string();
  {
    OpenEngine engine(blob);
    REQUIRE(pock_engine_save_checkpoint(engine.e, path.c_str()) == POCK_OK);
  }
  const std::vector<char> before = file_bytes(path);
  // The file size limit makes write() fail with EFBIG, as a full disk fails it with ENOSPC; in a
  // child, so that the limit does not outlive the case.
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    OpenEngine engine(blob);
    float loss = 0;
    if (pock_engine_train_step(engine.e, &loss) != POCK_OK) ::_exit(3);
    ::signal(SIGXFSZ, SIG_IGN);
    const rlimit limit{64 * 1024, 64 * 1024};
    ::setrlimit(RLIMIT_FSIZE, &limit);
    const pock_status s = pock_engine_save_checkpoint(engine.e, path.c_str());
    const bool named = std::strstr(pock_engine_last_error(engine.e), "cannot write") != nullptr;
    ::_exit(s == POCK_ERR_IO && named ? 0 : 5);
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK(file_bytes(path) == before);
  CHECK(temporaries(dir) == 0);
  fs::remove_all(dir);
}

TEST_CASE("a directory that cannot be written or does not exist fails the save with its path", "[checkpoint]") {
  const std::vector<uint8_t> blob = wide_blob();
  OpenEngine engine(blob);
  const fs::path dir = fresh_dir("readonly");
  // root writes through permission bits; procfs refuses new files to everyone.
  const bool root = ::geteuid() == 0;
  const std::string unwritable = root ? "/proc/pock-checkpoint" : (dir / "model.ckpt").string();
  if (!root) fs::permissions(dir, fs::perms::owner_read | fs::perms::owner_exec);
  CHECK(pock_engine_save_checkpoint(engine.e, unwritable.c_str()) == POCK_ERR_IO);
  CHECK_THAT(pock_engine_last_error(engine.e), Catch::Contains("cannot create"));
  const std::string missing = (dir / "no" / "such" / "model.ckpt").string();
  CHECK(pock_engine_save_checkpoint(engine.e, missing.c_str()) == POCK_ERR_IO);
  CHECK_THAT(pock_engine_last_error(engine.e), Catch::Contains(missing));
  fs::permissions(dir, fs::perms::owner_all);
  fs::remove_all(dir);
}

TEST_CASE("a checkpoint with a negative step is refused and changes nothing", "[checkpoint][hostile]") {
  const std::vector<uint8_t> blob = wide_blob();
  const fs::path dir = fresh_dir("negative");
  const std::string path = (dir / "model.ckpt").string();
  OpenEngine engine(blob);
  float loss = 0;
  REQUIRE(pock_engine_train_step(engine.e, &loss) == POCK_OK);
  REQUIRE(pock_engine_save_checkpoint(engine.e, path.c_str()) == POCK_OK);
  std::vector<char> bytes = file_bytes(path);
  const int64_t negative = -1;
  std::memcpy(bytes.data() + 16, &negative, sizeof(negative));  // after magic, version, fingerprint
  const uint32_t crc = blob::crc32(bytes.data(), bytes.size() - 4);
  std::memcpy(bytes.data() + bytes.size() - 4, &crc, 4);
  std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  REQUIRE(pock_engine_train_step(engine.e, &loss) == POCK_OK);
  CHECK(pock_engine_load_checkpoint(engine.e, path.c_str()) == POCK_ERR_INVALID_BLOB);
  CHECK_THAT(pock_engine_last_error(engine.e), Catch::Contains("step -1 is negative"));
  CHECK(pock_engine_step(engine.e) == 2);
  fs::remove_all(dir);
}
