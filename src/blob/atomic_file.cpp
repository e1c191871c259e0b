// Lives in pock_runtime (checkpoints need it), so an app that links only the runtime links.
#include "blob/atomic_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>

namespace pock {

AtomicFileWriter::AtomicFileWriter(std::string path)
    : path_(std::move(path)), tmp_(path_ + ".tmp." + std::to_string(::getpid())) {
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
  }
  return status_;
}

Status write_file_atomic(const std::string& path, const void* data, size_t size) {
  AtomicFileWriter file(path);
  file.write(data, size);
  return file.commit();
}

}  // namespace pock
