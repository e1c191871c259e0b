#include <zlib.h>

#include "blob/format.hpp"

namespace pock::blob {

// zlib's CRC-32: well-kept and fast; the blob checks every section with it at load.
uint32_t crc32(const void* data, size_t size, uint32_t seed) {
  uLong crc = seed;
  const auto* p = static_cast<const Bytef*>(data);
  while (size > 0) {
    const uInt chunk = size > (1u << 30) ? (1u << 30) : static_cast<uInt>(size);
    crc = ::crc32(crc, p, chunk);
    p += chunk;
    size -= chunk;
  }
  return static_cast<uint32_t>(crc);
}

}  // namespace pock::blob
