// The .pock container (format v1): a fixed 64-byte header, a section table, then sections.
// All integers little-endian. Documented in docs/blob-format.md.
#pragma once
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "pock/types.hpp"

namespace pock::blob {

constexpr char kMagic[8] = {'P', 'O', 'C', 'K', 'B', 'L', 'O', 'B'};
constexpr uint32_t kFormatVersion = 1;
constexpr uint32_t kMaxSections = 16;
constexpr uint64_t kWeightAlignment = 64;

enum SectionKind : uint32_t { kSectionProgram = 1, kSectionWeights = 2 };

#pragma pack(push, 1)
struct Header {
  char magic[8];
  uint32_t version;
  uint32_t header_bytes;   // sizeof(Header)
  uint64_t file_size;      // whole blob
  uint32_t section_count;
  uint32_t header_crc;     // CRC-32 of header (this field zeroed) and section table
  uint8_t reserved[32];
};
struct SectionEntry {
  uint32_t kind;
  uint32_t flags;
  uint64_t offset;         // from the blob's first byte
  uint64_t size;
  uint32_t crc;            // CRC-32 of the section's bytes
  uint32_t reserved;
};
#pragma pack(pop)
static_assert(sizeof(Header) == 64, "header is 64 bytes");
static_assert(sizeof(SectionEntry) == 32, "section entry is 32 bytes");

uint32_t crc32(const void* data, size_t size, uint32_t seed = 0);

}  // namespace pock::blob
