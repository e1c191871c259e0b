#include "tools/trained_weights.hpp"

#include "runtime/checkpoint_file.hpp"
#include "runtime/mapped_file.hpp"

namespace pock::tools {

bool is_lora_adapter_name(const std::string& name) {
  return name.find(".lora_A.") != std::string::npos || name.find(".lora_B.") != std::string::npos;
}

Result<TrainedWeights> read_checkpoint_weights(const std::string& path) {
  MappedFile file;
  POCK_RETURN_IF_ERROR(file.open(path));
  POCK_ASSIGN_OR_RETURN(const CheckpointContents ckpt, parse_checkpoint(file.data(), file.size(), path));
  TrainedWeights out{path, true, {}};
  for (const CheckpointTensor& t : ckpt.tensors) {
    out.tensors.push_back(TrainedTensor{std::string(t.name), DType::kF32, {}, false,
                                        std::vector<uint8_t>(t.data, t.data + t.nbytes)});
  }
  return out;
}

}  // namespace pock::tools
