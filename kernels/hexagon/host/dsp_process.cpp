#include "dsp_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <vector>

#include "../hx_wire.h"

namespace pock::hexagon {
namespace {

using Clock = std::chrono::steady_clock;

int remaining_ms(Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return left < 0 ? 0 : static_cast<int>(left);
}

// In the child, between fork and exec: only async-signal-safe calls.
[[noreturn]] void exec_child(const char* path, char* const* argv, int region_fd, int control_fd) {
  const struct rlimit no_core = {0, 0};
  setrlimit(RLIMIT_CORE, &no_core);  // a crashing qemu would otherwise write a ~150 MB core
  // Move both descriptors above the fixed numbers first, so that placing one cannot close the
  // other; F_DUPFD copies are not close-on-exec, and dup2 clears the flag on the targets.
  const int region = fcntl(region_fd, F_DUPFD, 10);
  const int control = fcntl(control_fd, F_DUPFD, 10);
  if (region < 0 || control < 0 || dup2(region, HX_FD_REGION) < 0 || dup2(control, HX_FD_CONTROL) < 0) _exit(126);
  // Nothing else of the host's leaks into the DSP side.
#ifdef SYS_close_range
  if (syscall(SYS_close_range, HX_FD_CONTROL + 1, ~0u, 0) != 0)
#endif
  {
    for (int fd = HX_FD_CONTROL + 1; fd < 1024; ++fd) close(fd);
  }
  execv(path, argv);
  _exit(127);
}

}  // namespace

bool DspProcess::start(const std::string& emulator, const std::string& program, int region_fd, std::string* error) {
  stop();
  int pair[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) {
    *error = std::string("socketpair failed: ") + std::strerror(errno);
    return false;
  }
  // Built before fork: the child must not allocate.
  std::vector<std::string> args;
  if (!emulator.empty()) args.push_back(emulator);
  args.push_back(program);
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t pid = fork();
  if (pid < 0) {
    *error = std::string("fork failed: ") + std::strerror(errno);
    close(pair[0]);
    close(pair[1]);
    return false;
  }
  if (pid == 0) exec_child(argv[0], argv.data(), region_fd, pair[1]);
  close(pair[1]);
  pid_ = pid;
  socket_ = pair[0];
  return true;
}

bool DspProcess::send(const void* data, size_t n, int timeout_ms, std::string* error) {
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  const auto* p = static_cast<const uint8_t*>(data);
  while (n > 0) {
    if (socket_ < 0) {
      *error = "the DSP's control channel is closed";
      return false;
    }
    pollfd pfd{socket_, POLLOUT, 0};
    const int ready = poll(&pfd, 1, remaining_ms(deadline));
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) {
      *error = "the DSP did not take a message within " + std::to_string(timeout_ms) + " ms";
      return false;
    }
    const ssize_t put = ::send(socket_, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (put < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (put <= 0) {
      *error = std::string("sending to the DSP failed: ") + std::strerror(errno);
      return false;
    }
    p += put;
    n -= static_cast<size_t>(put);
  }
  return true;
}

bool DspProcess::receive(void* data, size_t n, int timeout_ms, std::string* error) {
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  auto* p = static_cast<uint8_t*>(data);
  while (n > 0) {
    if (socket_ < 0) {
      *error = "the DSP's control channel is closed";
      return false;
    }
    pollfd pfd{socket_, POLLIN, 0};
    const int ready = poll(&pfd, 1, remaining_ms(deadline));
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) {
      *error = "the DSP did not reply within " + std::to_string(timeout_ms) + " ms";
      return false;
    }
    const ssize_t got = ::recv(socket_, p, n, MSG_DONTWAIT);
    if (got < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (got == 0) {
      *error = "the DSP closed its control channel";
      return false;
    }
    if (got < 0) {
      *error = std::string("receiving from the DSP failed: ") + std::strerror(errno);
      return false;
    }
    p += got;
    n -= static_cast<size_t>(got);
  }
  return true;
}

namespace {

// How a wait status says the child ended.
std::string describe(int status) {
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    return "was killed by signal " + std::to_string(sig) + " (" + strsignal(sig) + ")";
  }
  return "ended with wait status " + std::to_string(status);
}

}  // namespace

std::string DspProcess::reap(bool kill_first) {
  if (socket_ >= 0) close(socket_);
  socket_ = -1;
  if (pid_ <= 0) return "was not running";
  if (kill_first) ::kill(pid_, SIGKILL);
  int status = 0;
  pid_t r;
  do {
    r = waitpid(pid_, &status, 0);
  } while (r < 0 && errno == EINTR);
  pid_ = -1;
  if (r < 0) return std::string("could not be reaped: ") + std::strerror(errno);
  return describe(status);
}

std::string DspProcess::kill_and_reap() { return reap(true); }

std::string DspProcess::stop(int grace_ms) {
  if (pid_ <= 0) return reap(false);
  if (socket_ >= 0) close(socket_);  // EOF on the DSP's side: it exits by itself
  socket_ = -1;
  const auto deadline = Clock::now() + std::chrono::milliseconds(grace_ms);
  while (Clock::now() < deadline) {
    int status = 0;
    const pid_t r = waitpid(pid_, &status, WNOHANG);
    if (r == pid_) {
      pid_ = -1;
      return describe(status);
    }
    if (r < 0 && errno != EINTR) break;
    usleep(1000);
  }
  return reap(true);
}

}  // namespace pock::hexagon
