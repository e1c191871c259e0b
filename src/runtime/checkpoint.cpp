// Checkpoints: trainable parameters + optimizer state + step, in a small self-checking file
// (its layout: checkpoint_file.hpp).
#include <vector>

#include "blob/atomic_file.hpp"
#include "blob/format.hpp"
#include "blob/writer.hpp"
#include "program_generated.h"
#include "runtime/checkpoint_file.hpp"
#include "runtime/engine_core.hpp"
#include "runtime/mapped_file.hpp"

namespace pock {

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
  emit(kCheckpointMagic, sizeof(kCheckpointMagic));
  emit_value(kCheckpointVersion);
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
  POCK_ASSIGN_OR_RETURN(const CheckpointContents ckpt, parse_checkpoint(file.data(), file.size(), path));
  if (ckpt.tensors.size() != checkpointed_.size()) {
    return bad("holds " + std::to_string(ckpt.tensors.size()) + " tensors, this blob trains " +
               std::to_string(checkpointed_.size()) + ": it belongs to another blob");
  }
  // Validate everything before touching the engine: a bad file changes nothing.
  for (size_t i = 0; i < ckpt.tensors.size(); ++i) {
    const int32_t id = checkpointed_[i];
    const fb::Tensor& t = *view_.program->tensors()->Get(static_cast<flatbuffers::uoffset_t>(id));
    const std::string stored(ckpt.tensors[i].name);
    if (stored != t.name()->str()) return bad("tensor " + std::to_string(i) + " is '" + stored + "', this blob expects '" + t.name()->str() + "'");
    if (ckpt.tensors[i].nbytes != tensors_[id].nbytes) {
      return bad("tensor '" + stored + "' has " + std::to_string(ckpt.tensors[i].nbytes) + " bytes, this blob expects " +
                 std::to_string(tensors_[id].nbytes) + " (different shape)");
    }
  }
  if (ckpt.fingerprint != program_fingerprint()) return bad("was written for a blob with different tensors");
  for (size_t i = 0; i < ckpt.tensors.size(); ++i) POCK_RETURN_IF_ERROR(write_tensor(checkpointed_[i], ckpt.tensors[i].data));
  if (step_) *step_ = ckpt.step;
  return Status::ok();
}

}  // namespace pock
