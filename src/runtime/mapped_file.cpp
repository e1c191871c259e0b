#include "runtime/mapped_file.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace pock {

MappedFile::~MappedFile() {
  if (data_ && size_) ::munmap(data_, size_);
}

Status MappedFile::open(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status(Code::kIo, "cannot open '" + path + "': " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const std::string why = std::strerror(errno);
    ::close(fd);
    return Status(Code::kIo, "cannot stat '" + path + "': " + why);
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return Status(Code::kIo, "'" + path + "' is not a regular file");
  }
  size_ = static_cast<size_t>(st.st_size);
  if (size_ == 0) {
    ::close(fd);
    return Status(Code::kInvalidBlob, "'" + path + "' is empty");
  }
  void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (p == MAP_FAILED) {
    size_ = 0;
    return Status(Code::kIo, "cannot map '" + path + "': " + std::strerror(errno));
  }
  data_ = static_cast<uint8_t*>(p);
  return Status::ok();
}

AlignedBuffer::~AlignedBuffer() { std::free(data_); }

Status AlignedBuffer::allocate(size_t size, const char* what) {
  std::free(data_);
  data_ = nullptr;
  size_ = size;
  if (size == 0) return Status::ok();
  const size_t rounded = (size + 63) / 64 * 64;
  data_ = static_cast<uint8_t*>(std::aligned_alloc(64, rounded));
  if (!data_) {
    return Status(Code::kOutOfMemory, std::string("cannot allocate ") + std::to_string(size) + " bytes for the " + what);
  }
  std::memset(data_, 0, rounded);
  return Status::ok();
}

}  // namespace pock
