#include "runtime/checkpoint_file.hpp"

#include <cstring>

#include "blob/format.hpp"

namespace pock {
namespace {

struct Cursor {
  const uint8_t* p;
  size_t left;
  template <typename T>
  bool get(T* v) {
    if (left < sizeof(T)) return false;
    std::memcpy(v, p, sizeof(T));
    p += sizeof(T);
    left -= sizeof(T);
    return true;
  }
  bool skip(size_t n, const uint8_t** at) {
    if (left < n) return false;
    *at = p;
    p += n;
    left -= n;
    return true;
  }
};

}  // namespace

Result<CheckpointContents> parse_checkpoint(const uint8_t* data, size_t size, const std::string& path) {
  auto bad = [&](const std::string& what) { return Status(Code::kInvalidBlob, "checkpoint '" + path + "': " + what); };
  if (size < 8 + 4 + 4 + 8 + 4 + 4) return bad("truncated");
  uint32_t stored_crc = 0;
  std::memcpy(&stored_crc, data + size - 4, 4);
  if (blob::crc32(data, size - 4) != stored_crc) return bad("checksum mismatch (corrupt or truncated)");
  if (std::memcmp(data, kCheckpointMagic, 8) != 0) return bad("not a PockEngine checkpoint");
  Cursor c{data + 8, size - 12};
  CheckpointContents out;
  uint32_t version = 0, count = 0;
  if (!c.get(&version) || version != kCheckpointVersion) return bad("unsupported version");
  if (!c.get(&out.fingerprint) || !c.get(&out.step) || !c.get(&count)) return bad("truncated header");
  if (out.step < 0) return bad("step " + std::to_string(out.step) + " is negative");
  // Each record takes at least 12 bytes: a count the file cannot back is refused before reserving.
  if (count > c.left / 12) return bad("holds " + std::to_string(count) + " tensors, more than its size allows");
  out.tensors.reserve(count);
  for (uint32_t i = 0; i < count; ++i) {
    CheckpointTensor t;
    uint32_t name_len = 0;
    const uint8_t* name = nullptr;
    if (!c.get(&name_len) || !c.skip(name_len, &name) || !c.get(&t.nbytes)) return bad("truncated tensor record");
    t.name = std::string_view(reinterpret_cast<const char*>(name), name_len);
    if (!c.skip(t.nbytes, &t.data)) return bad("tensor '" + std::string(t.name) + "' is truncated");
    out.tensors.push_back(t);
  }
  if (c.left != 0) return bad("trailing bytes");
  return out;
}

}  // namespace pock
