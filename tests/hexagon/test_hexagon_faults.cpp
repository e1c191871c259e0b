// The DSP side failing mid-step — crashing, hanging past the reply deadline, answering garbage,
// or killed from outside at a random moment: the step fails with POCK_ERR_BACKEND and a message
// that says what happened, the weights and the step counter are those of the last completed step,
// the runtime drops the plugin and the following steps train on the CPU, as the CPU-only run
// does. Nothing is left behind: no child process (zombie or not), no core file, no mapping of the
// shared region. A step that fails for numerical reasons is not the DSP's fault: it is rolled back
// in the DSP's memory and training stays on the DSP.
#include <dirent.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <random>
#include <thread>

#include "hexagon/hexagon_training.hpp"

using namespace pock;
using namespace pock::test;

namespace {

// Child processes of this process, zombies included.
int children() {
  int n = 0;
  const std::string self = std::to_string(getpid());
  DIR* proc = opendir("/proc");
  REQUIRE(proc != nullptr);
  while (dirent* e = readdir(proc)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    std::ifstream stat(std::string("/proc/") + e->d_name + "/stat");
    std::string line;
    if (!std::getline(stat, line)) continue;
    // pid (comm) state ppid ...: comm may hold spaces, so read from the last ')'.
    const size_t close = line.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream rest(line.substr(close + 1));
    std::string state, ppid;
    rest >> state >> ppid;
    n += ppid == self;
  }
  closedir(proc);
  return n;
}

bool region_mapped() {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    if (line.find("pock-hexagon-region") != std::string::npos) return true;
  }
  return false;
}

bool core_files_here() {
  DIR* dir = opendir(".");
  REQUIRE(dir != nullptr);
  bool found = false;
  while (dirent* e = readdir(dir)) {
    const std::string name = e->d_name;
    found = found || name == "core" || (name.rfind("qemu_", 0) == 0 && name.size() > 5 && name.find(".core") != std::string::npos);
  }
  closedir(dir);
  return found;
}

// Sets an environment variable for one scope (the plugin reads its configuration at init).
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) { setenv(name, value, 1); }
  ~ScopedEnv() { unsetenv(name_); }

 private:
  const char* name_;
};

// Raises this process's core-file limit for one scope (to the hard limit), so that a DSP child
// that did not lower its own would leave a core file here and fail the test.
class ScopedCoreLimit {
 public:
  ScopedCoreLimit() {
    getrlimit(RLIMIT_CORE, &saved_);
    rlimit raised = saved_;
    raised.rlim_cur = std::min<rlim_t>(saved_.rlim_max, rlim_t{1} << 30);
    setrlimit(RLIMIT_CORE, &raised);
  }
  ~ScopedCoreLimit() { setrlimit(RLIMIT_CORE, &saved_); }

 private:
  rlimit saved_{};
};

bool hexagon_dropped(Engine& e) {
  for (const BackendInfo& b : e.backends()) {
    if (b.name == "hexagon") return !b.status.is_ok() && b.ops_bound == 0;
  }
  return false;
}

// After a failed step: the last good state, a dropped plugin, nothing left behind; then training
// goes on on the CPU, as the reference does.
void check_recovery(MlpRun& dsp, MlpRun& cpu, const std::vector<std::vector<float>>& good, int64_t good_steps) {
  const std::vector<std::string> names = trainable_names(dsp.spec);
  CHECK(dsp.engine->step() == good_steps);
  const std::vector<std::vector<float>> now = parameters(*dsp.engine, names);
  for (size_t i = 0; i < names.size(); ++i) {
    INFO(names[i]);
    CHECK(now[i] == good[i]);  // exactly the last completed step's
  }
  CHECK(hexagon_dropped(*dsp.engine));
  CHECK(children() == 0);
  CHECK(!region_mapped());
  CHECK(!core_files_here());
  // The cpu run catches up to the same point, then both go on together.
  for (int64_t s = cpu.engine->step(); s < good_steps; ++s) step(*cpu.engine, static_cast<int>(s));
  for (int s = static_cast<int>(good_steps); s < static_cast<int>(good_steps) + 3; ++s) {
    const float got = step(*dsp.engine, s);
    const float want = step(*cpu.engine, s);
    INFO("step " << s << " after the fall-back");
    CHECK(std::fabs(got - want) <= 1e-5f * std::max(1.0f, std::fabs(want)));
  }
  for (const std::string& name : names) {
    INFO(name);
    CHECK(relative_difference(parameter(*dsp.engine, name), parameter(*cpu.engine, name)) <= 2e-5);
  }
}

}  // namespace

TEST_CASE("hexagon: a DSP that crashes, hangs or answers garbage mid-step fails the step cleanly", "[hexagon][faults]") {
  if (!hexagon_available()) return;
  struct Fault {
    const char* name;
    uint32_t kind;
    const char* says;  // in the step's error message
  };
  const Fault faults[] = {
      {"crash", POCK_HEXAGON_FAULT_CRASH, "killed by signal 11"},
      {"hang", POCK_HEXAGON_FAULT_HANG, "did not reply within 300 ms"},
      {"garbage", POCK_HEXAGON_FAULT_GARBAGE, "malformed reply"},
  };
  const ScopedEnv timeout("POCK_HEXAGON_TIMEOUT_MS", "300");
  const ScopedCoreLimit cores;
  for (const Fault& f : faults) {
    SECTION(f.name) {
      MlpRun dsp = open_mlp(classifier_recipe(), true);
      MlpRun cpu = open_mlp(classifier_recipe(), false);
      for (int s = 0; s < 2; ++s) step(*dsp.engine, s);
      const std::vector<std::vector<float>> good = parameters(*dsp.engine, trainable_names(dsp.spec));
      CHECK(children() == 1);  // the DSP process
      CHECK(region_mapped());

      hexagon_hooks().inject_fault(f.kind);  // rides on the next batch: the forward pass of step 2
      auto failed = try_step(*dsp.engine, 2);
      REQUIRE(!failed.is_ok());
      INFO(failed.status().message());
      CHECK(failed.status().code() == Code::kBackend);
      CHECK(failed.status().message().find("hexagon: ") != std::string::npos);
      CHECK(failed.status().message().find(f.says) != std::string::npos);
      CHECK(failed.status().message().find("dropped") != std::string::npos);
      check_recovery(dsp, cpu, good, 2);
    }
  }
}

TEST_CASE("hexagon: the DSP process killed at a random point of a step, many times", "[hexagon][faults]") {
  if (!hexagon_available()) return;
  std::mt19937 gen(2026);
  constexpr int kTrials = 16;
  for (int trial = 0; trial < kTrials; ++trial) {
    INFO("trial " << trial);
    MlpRun dsp = open_mlp(classifier_recipe(), true);
    MlpRun cpu = open_mlp(classifier_recipe(), false);
    const std::vector<std::string> names = trainable_names(dsp.spec);
    step(*dsp.engine, 0);
    const int64_t pid = hexagon_hooks().read().dsp_pid;
    REQUIRE(pid > 0);
    // A step takes about a millisecond here: a delay of up to 3 ms lands inside one, or between two.
    const auto delay = std::chrono::microseconds(std::uniform_int_distribution<int>(0, 3000)(gen));
    std::vector<std::vector<float>> good = parameters(*dsp.engine, names);
    std::thread killer([&] {
      std::this_thread::sleep_for(delay);
      ::kill(static_cast<pid_t>(pid), SIGKILL);
    });
    int64_t good_steps = dsp.engine->step();
    Status failure;
    for (int s = static_cast<int>(good_steps); s < 200 && failure.is_ok(); ++s) {
      auto loss = try_step(*dsp.engine, s);
      if (!loss.is_ok()) {
        failure = loss.status();
        break;
      }
      good = parameters(*dsp.engine, names);
      good_steps = dsp.engine->step();
    }
    killer.join();
    INFO("killed after " << delay.count() << " us; " << failure.message());
    REQUIRE(!failure.is_ok());
    CHECK(failure.code() == Code::kBackend);
    CHECK(failure.message().find("hexagon: ") != std::string::npos);
    check_recovery(dsp, cpu, good, good_steps);
  }
}

TEST_CASE("hexagon: a step that goes NaN on the DSP is rolled back in its memory, and the DSP stays", "[hexagon][faults]") {
  if (!hexagon_available()) return;
  MlpRun dsp = open_mlp(classifier_recipe(), true);
  MlpRun cpu = open_mlp(classifier_recipe(), false);
  const std::vector<std::string> names = trainable_names(dsp.spec);
  for (int s = 0; s < 2; ++s) {
    step(*dsp.engine, s);
    step(*cpu.engine, s);
  }
  const std::vector<std::vector<float>> good = parameters(*dsp.engine, names);
  const uint64_t messages = hexagon_hooks().read().messages;
  Batch poisoned = make_batch(2);
  poisoned.x[5] = std::numeric_limits<float>::quiet_NaN();
  for (MlpRun* run : {&dsp, &cpu}) {
    REQUIRE(run->engine->set_input("x", poisoned.x).is_ok());
    REQUIRE(run->engine->set_input("label", poisoned.label).is_ok());
    auto failed = run->engine->train_step();
    REQUIRE(!failed.is_ok());
    CHECK(failed.status().code() == Code::kNumerical);
  }
  CHECK(hexagon_hooks().read().messages > messages);  // the step did run on the DSP
  CHECK(parameters(*dsp.engine, names) == good);
  CHECK(!hexagon_dropped(*dsp.engine));
  CHECK(children() == 1);
  for (int s = 2; s < 5; ++s) {
    const uint64_t before = hexagon_hooks().read().ops_run;
    const float got = step(*dsp.engine, s);
    const float want = step(*cpu.engine, s);
    CHECK(hexagon_hooks().read().ops_run > before);  // still on the DSP
    CHECK(std::fabs(got - want) <= 1e-5f * std::max(1.0f, std::fabs(want)));
  }
}
