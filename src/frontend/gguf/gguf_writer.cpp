#include "frontend/gguf/gguf_writer.hpp"

#include <cstring>

#include "blob/atomic_file.hpp"
#include "frontend/gguf/ggml_types.hpp"

namespace pock::gguf {
namespace {

constexpr uint32_t kTypeUint32 = 4, kTypeFloat32 = 6, kTypeString = 8, kTypeArray = 9;

template <typename T>
void put(std::vector<uint8_t>& out, T v) {
  uint8_t b[sizeof(T)];
  std::memcpy(b, &v, sizeof(T));  // GGUF is little-endian, as every target of this library
  out.insert(out.end(), b, b + sizeof(T));
}

void put_string(std::vector<uint8_t>& out, const std::string& s) {
  put<uint64_t>(out, s.size());
  out.insert(out.end(), s.begin(), s.end());
}

uint64_t align_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

}  // namespace

void MetadataBuilder::key(const std::string& k, uint32_t type) {
  put_string(bytes_, k);
  put<uint32_t>(bytes_, type);
  ++count_;
}

void MetadataBuilder::add_string(const std::string& k, const std::string& value) {
  key(k, kTypeString);
  put_string(bytes_, value);
}

void MetadataBuilder::add_u32(const std::string& k, uint32_t value) {
  key(k, kTypeUint32);
  put<uint32_t>(bytes_, value);
}

void MetadataBuilder::add_f32(const std::string& k, float value) {
  key(k, kTypeFloat32);
  put<float>(bytes_, value);
}

void MetadataBuilder::add_string_array(const std::string& k, const std::vector<std::string>& values) {
  key(k, kTypeArray);
  put<uint32_t>(bytes_, kTypeString);
  put<uint64_t>(bytes_, values.size());
  for (const std::string& v : values) put_string(bytes_, v);
}

void MetadataBuilder::add_encoded(const uint8_t* bytes, uint64_t size, uint64_t count) {
  bytes_.insert(bytes_.end(), bytes, bytes + size);
  count_ += count;
}

Status write_gguf(const std::string& path, const MetadataBuilder& metadata, const std::vector<TensorToWrite>& tensors,
                  uint64_t alignment) {
  if (alignment == 0 || (alignment & (alignment - 1)) != 0) return Status(Code::kInvalidArgument, "GGUF: alignment must be a power of two");
  std::vector<uint8_t> header = {'G', 'G', 'U', 'F'};
  put<uint32_t>(header, 3);
  put<uint64_t>(header, tensors.size());
  put<uint64_t>(header, metadata.count());
  header.insert(header.end(), metadata.bytes().begin(), metadata.bytes().end());
  uint64_t offset = 0;
  for (const TensorToWrite& t : tensors) {
    uint64_t per_block = 0, block_bytes = 0, elements = 1;
    for (uint64_t d : t.dims) elements *= d;
    if (!block_layout(t.type, &per_block, &block_bytes) || t.dims.empty() || t.dims[0] % per_block != 0 ||
        elements / per_block * block_bytes != t.nbytes) {
      return Status(Code::kInvalidArgument, "GGUF writer: tensor '" + t.name + "' has " + std::to_string(t.nbytes) +
                                                " bytes, not what its shape and type " + type_name(t.type) + " need");
    }
    put_string(header, t.name);
    put<uint32_t>(header, static_cast<uint32_t>(t.dims.size()));
    for (uint64_t d : t.dims) put<uint64_t>(header, d);
    put<uint32_t>(header, t.type);
    put<uint64_t>(header, offset);
    offset = align_up(offset + t.nbytes, alignment);
  }
  header.resize(align_up(header.size(), alignment), 0);
  AtomicFileWriter out(path);
  out.write(header.data(), header.size());
  const std::vector<uint8_t> padding(alignment, 0);
  for (const TensorToWrite& t : tensors) {
    out.write(t.data, t.nbytes);
    out.write(padding.data(), align_up(t.nbytes, alignment) - t.nbytes);
  }
  return out.commit();
}

}  // namespace pock::gguf
