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

void MappedFile::drop_resident() const {
  if (data_ && size_) ::madvise(data_, size_, MADV_DONTNEED);  // a private read-only file mapping
}

void MappedFile::drop_range(const uint8_t* p, size_t n) const {
  if (!data_ || p < data_ || p + n > data_ + size_) return;
  const uintptr_t page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  const uintptr_t begin = (reinterpret_cast<uintptr_t>(p) + page - 1) / page * page;
  const uintptr_t end = (reinterpret_cast<uintptr_t>(p) + n) / page * page;
  if (end > begin) ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
}

namespace {
// From here on a buffer is mapped rather than allocated: below, the pages it spans are few and a
// memset costs nothing worth avoiding.
constexpr size_t kMapFrom = size_t{1} << 20;
}  // namespace

AlignedBuffer::~AlignedBuffer() { release(); }

void AlignedBuffer::release() {
  if (mapped_) ::munmap(data_, mapped_);
  else std::free(data_);
  data_ = nullptr;
  mapped_ = 0;
}

Status AlignedBuffer::allocate(size_t size, const char* what) {
  release();
  size_ = size;
  if (size == 0) return Status::ok();
  const size_t rounded = (size + 63) / 64 * 64;
  if (rounded >= kMapFrom) {
    void* p = ::mmap(nullptr, rounded, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
      return Status(Code::kOutOfMemory, std::string("cannot allocate ") + std::to_string(size) + " bytes for the " +
                                            what + ": " + std::strerror(errno));
    }
    data_ = static_cast<uint8_t*>(p);  // page-aligned, hence 64-byte aligned; zero on first touch
    mapped_ = rounded;
    return Status::ok();
  }
  data_ = static_cast<uint8_t*>(std::aligned_alloc(64, rounded));
  if (!data_) {
    return Status(Code::kOutOfMemory, std::string("cannot allocate ") + std::to_string(size) + " bytes for the " + what);
  }
  std::memset(data_, 0, rounded);
  return Status::ok();
}

}  // namespace pock
