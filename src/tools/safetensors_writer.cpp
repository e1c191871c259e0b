#include "tools/safetensors_writer.hpp"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "blob/atomic_file.hpp"

namespace pock::tools {
namespace {

const char* safetensors_dtype(DType dtype) {
  switch (dtype) {
    case DType::kF32: return "F32";
    case DType::kF16: return "F16";
    case DType::kBF16: return "BF16";
    case DType::kI32: return "I32";
    case DType::kI64: return "I64";
    case DType::kI8: return "I8";
    case DType::kU8: return "U8";
    case DType::kBool: return "BOOL";
    case DType::kF64: return "F64";
    case DType::kI16: return "I16";
    case DType::kU16: return "U16";
    case DType::kU32: return "U32";
    case DType::kU64: return "U64";
  }
  return "";
}

}  // namespace

Status write_safetensors(const std::string& path, const std::vector<TrainedTensor>& tensors) {
  // nlohmann's object keeps its keys sorted: the data goes in that order, so that the offsets
  // increase through the header as readers that stream the file expect.
  std::vector<const TrainedTensor*> ordered;
  for (const TrainedTensor& t : tensors) ordered.push_back(&t);
  std::sort(ordered.begin(), ordered.end(), [](const TrainedTensor* a, const TrainedTensor* b) { return a->name < b->name; });
  nlohmann::json header = nlohmann::json::object();
  uint64_t offset = 0;
  for (const TrainedTensor* t : ordered) {
    if (!t->typed) return Status(Code::kInternal, "safetensors: '" + t->name + "' has no known dtype and shape");
    if (t->bytes.size() != static_cast<size_t>(numel(t->shape)) * dtype_size(t->dtype)) {
      return Status(Code::kInvalidArgument, "safetensors: '" + t->name + "' holds " + std::to_string(t->bytes.size()) +
                                                " bytes, its shape " + shape_str(t->shape) + " needs another count");
    }
    if (header.contains(t->name)) return Status(Code::kInvalidArgument, "safetensors: '" + t->name + "' appears twice");
    header[t->name] = {{"dtype", safetensors_dtype(t->dtype)},
                       {"shape", t->shape},
                       {"data_offsets", {offset, offset + t->bytes.size()}}};
    offset += t->bytes.size();
  }
  header["__metadata__"] = {{"format", "pt"}};
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');
  const uint64_t header_size = text.size();
  uint8_t size_le[8];
  for (int i = 0; i < 8; ++i) size_le[i] = static_cast<uint8_t>(header_size >> (8 * i));
  AtomicFileWriter file(path);
  file.write(size_le, sizeof(size_le));
  file.write(text.data(), text.size());
  for (const TrainedTensor* t : ordered) file.write(t->bytes.data(), t->bytes.size());
  return file.commit();
}

}  // namespace pock::tools
