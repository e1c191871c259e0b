// Crash-safe file replacement, shared by the blob writer (compiler) and checkpoints (runtime).
#pragma once
#include <cstddef>
#include <string>

#include "pock/status.hpp"

namespace pock {

// Writes a file in pieces without holding it in memory, atomically: the pieces go to a temporary
// file beside `path`; commit() fsyncs and renames it over `path`. Until commit succeeds `path` is
// untouched, and a writer destroyed without committing (an error, a full disk) removes its
// temporary file. The first failing write is remembered and reported by commit().
// A process killed mid-write cannot remove its temporary file; the next writer of the same path
// removes those of processes that no longer run.
class AtomicFileWriter {
 public:
  explicit AtomicFileWriter(std::string path);
  ~AtomicFileWriter();
  AtomicFileWriter(const AtomicFileWriter&) = delete;
  AtomicFileWriter& operator=(const AtomicFileWriter&) = delete;

  void write(const void* data, size_t size);
  Status commit();

 private:
  void fail(const std::string& what);
  std::string path_, tmp_;
  int fd_ = -1;
  Status status_;
};

// The whole file at once through AtomicFileWriter.
Status write_file_atomic(const std::string& path, const void* data, size_t size);

}  // namespace pock
