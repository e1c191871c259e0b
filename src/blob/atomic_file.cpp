// Lives in pock_runtime (checkpoints need it), so an app that links only the runtime links.
#include "blob/atomic_file.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

namespace pock {
namespace {

std::string directory_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
}

// Removes "<path>.tmp.<pid>" files left by writers killed mid-write: those whose process is gone.
// A live process's file (another writer now, or a reused pid) is left alone.
void remove_stale_temporaries(const std::string& path) {
  const size_t slash = path.rfind('/');
  const std::string prefix = (slash == std::string::npos ? path : path.substr(slash + 1)) + ".tmp.";
  const std::string dir = directory_of(path);
  DIR* d = ::opendir(dir.c_str());
  if (!d) return;
  while (const dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) continue;
    const std::string digits = name.substr(prefix.size());
    if (digits.size() > 9 || digits.find_first_not_of("0123456789") != std::string::npos) continue;
    const pid_t pid = static_cast<pid_t>(std::stol(digits));
    if (pid <= 0 || pid == ::getpid()) continue;
    if (::kill(pid, 0) != 0 && errno == ESRCH) ::unlink((dir + "/" + name).c_str());
  }
  ::closedir(d);
}

// After a rename, the directory entry itself must reach the disk for the new file to survive a
// power cut. A failure here is not reported: the rename has happened and the data is written.
void sync_directory(const std::string& path) {
  const int fd = ::open(directory_of(path).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

}  // namespace

AtomicFileWriter::AtomicFileWriter(std::string path)
    : path_(std::move(path)), tmp_(path_ + ".tmp." + std::to_string(::getpid())) {
  remove_stale_temporaries(path_);
  fd_ = ::open(tmp_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0) status_ = Status(Code::kIo, "cannot create '" + tmp_ + "': " + std::strerror(errno));
}

AtomicFileWriter::~AtomicFileWriter() {
  if (fd_ >= 0) {  // never committed: leave `path` as it was
    ::close(fd_);
    ::unlink(tmp_.c_str());
  }
}

void AtomicFileWriter::fail(const std::string& what) {
  status_ = Status(Code::kIo, what + " '" + tmp_ + "': " + std::strerror(errno));
}

void AtomicFileWriter::write(const void* data, size_t size) {
  if (!status_.is_ok()) return;
  const auto* p = static_cast<const uint8_t*>(data);
  while (size > 0) {
    const ssize_t n = ::write(fd_, p, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      return fail("cannot write");
    }
    p += n;
    size -= static_cast<size_t>(n);
  }
}

Status AtomicFileWriter::commit() {
  if (!status_.is_ok()) return status_;
  const int fd = fd_;
  fd_ = -1;
  if (::fsync(fd) != 0) {
    fail("cannot flush");
    ::close(fd);
    ::unlink(tmp_.c_str());
    return status_;
  }
  if (::close(fd) != 0) {
    fail("cannot close");
    ::unlink(tmp_.c_str());
    return status_;
  }
  if (std::rename(tmp_.c_str(), path_.c_str()) != 0) {
    status_ = Status(Code::kIo, "cannot rename '" + tmp_ + "' to '" + path_ + "': " + std::strerror(errno));
    ::unlink(tmp_.c_str());
    return status_;
  }
  sync_directory(path_);
  return status_;
}

Status write_file_atomic(const std::string& path, const void* data, size_t size) {
  AtomicFileWriter file(path);
  file.write(data, size);
  return file.commit();
}

}  // namespace pock
