// read_trained_weights: the .npz of --save-weights or a checkpoint, told apart by their first bytes
// (apart from trained_weights.cpp, which the Python module compiles without pockc's libzip).
#include <cstring>

#include "runtime/checkpoint_file.hpp"
#include "runtime/mapped_file.hpp"
#include "tools/npz.hpp"
#include "tools/trained_weights.hpp"

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

}  // namespace

Result<TrainedWeights> read_trained_weights(const std::string& path) {
  MappedFile file;
  POCK_RETURN_IF_ERROR(file.open(path));
  const bool checkpoint =
      file.size() >= sizeof(kCheckpointMagic) && std::memcmp(file.data(), kCheckpointMagic, sizeof(kCheckpointMagic)) == 0;
  return checkpoint ? read_checkpoint_weights(path) : from_npz(path);
}

}  // namespace pock::tools
