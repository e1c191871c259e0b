// The checkpoint file format, parsed without an engine: what EngineCore::load_checkpoint checks
// against its blob, and what `pockc export` reads trained tensors from.
// Layout: "POCKCKPT" u32 version, u32 fingerprint, i64 step, u32 count, then per tensor
// (u32 name length, name, u64 nbytes, bytes), then u32 CRC-32 of everything before it.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "pock/status.hpp"

namespace pock {

struct CheckpointTensor {
  std::string_view name;  // points into the parsed bytes
  const uint8_t* data = nullptr;
  uint64_t nbytes = 0;
};

struct CheckpointContents {
  uint32_t fingerprint = 0;  // of the program that wrote it (EngineCore::program_fingerprint)
  int64_t step = 0;
  std::vector<CheckpointTensor> tensors;  // in file order
};

inline constexpr char kCheckpointMagic[8] = {'P', 'O', 'C', 'K', 'C', 'K', 'P', 'T'};
inline constexpr uint32_t kCheckpointVersion = 1;

// Checks the CRC, magic, version and every record's bounds before returning anything; errors are
// kInvalidBlob and start with "checkpoint '<path>': ". The result points into `data`.
Result<CheckpointContents> parse_checkpoint(const uint8_t* data, size_t size, const std::string& path);

}  // namespace pock
