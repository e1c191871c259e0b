#include "tools/trained_weights.hpp"

#include <cstring>

#include "runtime/checkpoint_file.hpp"
#include "runtime/mapped_file.hpp"
#include "tools/npz.hpp"

namespace pock::tools {
namespace {

Result<TrainedWeights> from_npz(const std::string& path) {
  POCK_ASSIGN_OR_RETURN(const NpzFile npz, read_npz(path));
  TrainedWeights out{path, false, {}};
  for (const auto& [name, array] : npz) {
    auto dtype = dtype_of_descr(array.descr);
    if (!dtype.is_ok()) return Status(Code::kInvalidArgument, path + ": '" + name + "': " + dtype.status().message());
    const size_t nbytes = static_cast<size_t>(array.count()) * dtype_size(dtype.value());
    if (array.data.size() != nbytes) return Status(Code::kInvalidArgument, path + ": '" + name + "' is truncated");
    out.tensors.push_back(TrainedTensor{name, dtype.value(), array.shape, true, array.data});
  }
  return out;
}

Result<TrainedWeights> from_checkpoint(const std::string& path, const MappedFile& file) {
  POCK_ASSIGN_OR_RETURN(const CheckpointContents ckpt, parse_checkpoint(file.data(), file.size(), path));
  TrainedWeights out{path, true, {}};
  for (const CheckpointTensor& t : ckpt.tensors) {
    out.tensors.push_back(TrainedTensor{std::string(t.name), DType::kF32, {}, false,
                                        std::vector<uint8_t>(t.data, t.data + t.nbytes)});
  }
  return out;
}

}  // namespace

bool is_lora_adapter_name(const std::string& name) {
  return name.find(".lora_A.") != std::string::npos || name.find(".lora_B.") != std::string::npos;
}

Result<TrainedWeights> read_trained_weights(const std::string& path) {
  MappedFile file;
  POCK_RETURN_IF_ERROR(file.open(path));
  if (file.size() >= sizeof(kCheckpointMagic) && std::memcmp(file.data(), kCheckpointMagic, sizeof(kCheckpointMagic)) == 0) {
    return from_checkpoint(path, file);
  }
  return from_npz(path);
}

}  // namespace pock::tools
