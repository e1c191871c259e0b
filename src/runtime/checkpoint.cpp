// Checkpoints: trainable parameters + optimizer state + step, in a small self-checking file.
// Layout: "POCKCKPT" u32 version, u32 fingerprint, i64 step, u32 count, then per tensor
// (u32 name length, name, u64 nbytes, bytes), then u32 CRC-32 of everything before it.
#include <cstring>
#include <vector>

#include "blob/atomic_file.hpp"
#include "blob/format.hpp"
#include "blob/writer.hpp"
#include "program_generated.h"
#include "runtime/engine_core.hpp"
#include "runtime/mapped_file.hpp"

namespace pock {
namespace {

constexpr char kCkptMagic[8] = {'P', 'O', 'C', 'K', 'C', 'K', 'P', 'T'};
constexpr uint32_t kCkptVersion = 1;

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

Status EngineCore::save_checkpoint(const std::string& path) const {
  // Streamed to the file with a running CRC: no copy of the state is held in memory (a copy was
  // the demo's largest RSS item after the weights: +41 MB for EfficientNet-Lite0's full-BP state).
  AtomicFileWriter file(path);
  uint32_t crc = 0;
  auto emit = [&](const void* data, size_t size) {
    crc = blob::crc32(data, size, crc);
    file.write(data, size);
  };
  auto emit_value = [&](const auto& v) { emit(&v, sizeof(v)); };
  emit(kCkptMagic, sizeof(kCkptMagic));
  emit_value(kCkptVersion);
  emit_value(program_fingerprint());
  emit_value(step());
  emit_value(static_cast<uint32_t>(checkpointed_.size()));
  std::vector<uint8_t> staging;  // a tensor in device memory comes to the host through its backend
  for (int32_t id : checkpointed_) {
    const fb::Tensor& t = *view_.program->tensors()->Get(static_cast<flatbuffers::uoffset_t>(id));
    emit_value(static_cast<uint32_t>(t.name()->size()));
    emit(t.name()->data(), t.name()->size());
    emit_value(static_cast<uint64_t>(tensors_[id].nbytes));
    if (t.space() == 0) {
      emit(tensors_[id].data, tensors_[id].nbytes);
      continue;
    }
    staging.resize(tensors_[id].nbytes);
    POCK_RETURN_IF_ERROR(read_tensor(id, staging.data()));
    emit(staging.data(), staging.size());
  }
  file.write(&crc, sizeof(crc));
  return file.commit();
}

Status EngineCore::load_checkpoint(const std::string& path) {
  MappedFile file;
  POCK_RETURN_IF_ERROR(file.open(path));
  auto bad = [&](const std::string& what) { return Status(Code::kInvalidBlob, "checkpoint '" + path + "': " + what); };
  if (file.size() < 8 + 4 + 4 + 8 + 4 + 4) return bad("truncated");
  uint32_t stored_crc = 0;
  std::memcpy(&stored_crc, file.data() + file.size() - 4, 4);
  if (blob::crc32(file.data(), file.size() - 4) != stored_crc) return bad("checksum mismatch (corrupt or truncated)");
  if (std::memcmp(file.data(), kCkptMagic, 8) != 0) return bad("not a PockEngine checkpoint");
  Cursor c{file.data() + 8, file.size() - 12};
  uint32_t version = 0, fingerprint = 0, count = 0;
  int64_t step_value = 0;
  if (!c.get(&version) || version != kCkptVersion) return bad("unsupported version");
  if (!c.get(&fingerprint) || !c.get(&step_value) || !c.get(&count)) return bad("truncated header");
  if (step_value < 0) return bad("step " + std::to_string(step_value) + " is negative");
  if (count != checkpointed_.size()) {
    return bad("holds " + std::to_string(count) + " tensors, this blob trains " + std::to_string(checkpointed_.size()) +
               ": it belongs to another blob");
  }
  // Validate everything before touching the engine: a bad file changes nothing.
  std::vector<const uint8_t*> payloads(count);
  for (uint32_t i = 0; i < count; ++i) {
    const int32_t id = checkpointed_[i];
    const fb::Tensor& t = *view_.program->tensors()->Get(static_cast<flatbuffers::uoffset_t>(id));
    uint32_t name_len = 0;
    const uint8_t* name = nullptr;
    uint64_t nbytes = 0;
    if (!c.get(&name_len) || !c.skip(name_len, &name) || !c.get(&nbytes)) return bad("truncated tensor record");
    const std::string stored(reinterpret_cast<const char*>(name), name_len);
    if (stored != t.name()->str()) return bad("tensor " + std::to_string(i) + " is '" + stored + "', this blob expects '" + t.name()->str() + "'");
    if (nbytes != tensors_[id].nbytes) {
      return bad("tensor '" + stored + "' has " + std::to_string(nbytes) + " bytes, this blob expects " +
                 std::to_string(tensors_[id].nbytes) + " (different shape)");
    }
    if (!c.skip(nbytes, &payloads[i])) return bad("tensor '" + stored + "' is truncated");
  }
  if (c.left != 0) return bad("trailing bytes");
  if (fingerprint != program_fingerprint()) return bad("was written for a blob with different tensors");
  for (uint32_t i = 0; i < count; ++i) POCK_RETURN_IF_ERROR(write_tensor(checkpointed_[i], payloads[i]));
  if (step_) *step_ = step_value;
  return Status::ok();
}

}  // namespace pock
