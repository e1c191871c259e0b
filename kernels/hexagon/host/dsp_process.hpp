// The DSP side as a child process: qemu-hexagon running the DSP program, with the shared region
// on descriptor HX_FD_REGION and one end of a stream socketpair on HX_FD_CONTROL. The control
// channel is a socket rather than pipes so that writing to a dead DSP gives EPIPE through
// MSG_NOSIGNAL instead of killing the host with SIGPIPE — a library must not change the process's
// signal dispositions. Every wait is bounded by poll(); a DSP that misses its deadline is killed.
// The child is always reaped (no zombie) and never dumps core (RLIMIT_CORE 0).
#pragma once
#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace pock::hexagon {

class DspProcess {
 public:
  DspProcess() = default;
  DspProcess(const DspProcess&) = delete;
  DspProcess& operator=(const DspProcess&) = delete;
  ~DspProcess() { stop(); }

  // Starts `emulator program` (emulator may be empty: the program runs directly, as on a device
  // where it is native) with `region_fd` as HX_FD_REGION. False with *error on failure.
  bool start(const std::string& emulator, const std::string& program, int region_fd, std::string* error);

  // Sends all of [data, data + n) within `timeout_ms`; false with *error when the DSP is gone or
  // does not take it in time.
  bool send(const void* data, size_t n, int timeout_ms, std::string* error);
  // Receives exactly n bytes within `timeout_ms` (from the call); false with *error on EOF,
  // failure or timeout.
  bool receive(void* data, size_t n, int timeout_ms, std::string* error);

  // Kills the child if it still runs and reaps it; returns how it ended ("exited with status 0",
  // "killed by signal 11 (Segmentation fault)"). Idempotent.
  std::string kill_and_reap();
  // Asks the child to end (the socket closes: the DSP program exits on EOF), waits up to
  // `grace_ms` for it, then kills it; returns how it ended, as kill_and_reap. Idempotent.
  std::string stop(int grace_ms = 500);

  bool running() const { return pid_ > 0; }
  pid_t pid() const { return pid_; }

 private:
  std::string reap(bool kill_first);

  pid_t pid_ = -1;
  int socket_ = -1;
};

}  // namespace pock::hexagon
