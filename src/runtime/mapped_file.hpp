// Read-only memory mapping of a blob file: weights are used in place, never copied.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "pock/status.hpp"

namespace pock {

class MappedFile {
 public:
  MappedFile() = default;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();
  Status open(const std::string& path);
  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  // Releases the mapping's resident pages (MADV_DONTNEED); the contents stay readable, faulted
  // back in from the file as they are read. Best effort: nothing to report if the system declines.
  void drop_resident() const;
  // The same for the whole pages inside [p, p + n), a stretch of this mapping.
  void drop_range(const uint8_t* p, size_t n) const;

 private:
  uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

// 64-byte aligned, zero-initialized buffer owned by the engine. Large buffers are anonymous
// mappings, whose pages the kernel zeroes on first touch: a region a run never writes (the output
// of a function the app never calls, the part of an arena only another function needs) costs
// address space, not resident memory — an app's peak RSS follows what it actually runs.
class AlignedBuffer {
 public:
  AlignedBuffer() = default;
  AlignedBuffer(const AlignedBuffer&) = delete;
  AlignedBuffer& operator=(const AlignedBuffer&) = delete;
  ~AlignedBuffer();
  Status allocate(size_t size, const char* what);
  uint8_t* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  void release();

  uint8_t* data_ = nullptr;
  size_t size_ = 0;
  size_t mapped_ = 0;  // bytes mapped with mmap (0: data_ is from aligned_alloc)
};

}  // namespace pock
