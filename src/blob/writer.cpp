#include "blob/writer.hpp"

#include <cstring>

#include "blob/format.hpp"
#include "program_generated.h"

namespace pock {

uint64_t ProgramSpec::add_weight(const void* data, size_t size) {
  const uint64_t offset = (weights.size() + blob::kWeightAlignment - 1) / blob::kWeightAlignment * blob::kWeightAlignment;
  weights.resize(offset + size);
  if (size) std::memcpy(weights.data() + offset, data, size);
  return offset;
}

namespace {

flatbuffers::Offset<fb::Attr> write_attr(flatbuffers::FlatBufferBuilder& fbb, const std::string& name,
                                         const AttrValue& value) {
  auto n = fbb.CreateString(name);
  if (auto* i = std::get_if<int64_t>(&value)) {
    return fb::CreateAttr(fbb, n, fb::AttrKind::Int, *i);
  }
  if (auto* f = std::get_if<double>(&value)) {
    return fb::CreateAttr(fbb, n, fb::AttrKind::Float, 0, *f);
  }
  if (auto* s = std::get_if<std::string>(&value)) {
    auto so = fbb.CreateString(*s);
    return fb::CreateAttr(fbb, n, fb::AttrKind::String, 0, 0.0, so);
  }
  if (auto* l = std::get_if<std::vector<int64_t>>(&value)) {
    auto lo = fbb.CreateVector(*l);
    return fb::CreateAttr(fbb, n, fb::AttrKind::Ints, 0, 0.0, 0, lo);
  }
  const auto& d = std::get<std::vector<double>>(value);
  auto lo = fbb.CreateVector(d);
  return fb::CreateAttr(fbb, n, fb::AttrKind::Floats, 0, 0.0, 0, 0, lo);
}

std::vector<uint8_t> build_program(const ProgramSpec& spec) {
  flatbuffers::FlatBufferBuilder fbb(1 << 16);
  std::vector<flatbuffers::Offset<fb::Tensor>> tensors;
  tensors.reserve(spec.tensors.size());
  for (const TensorSpec& t : spec.tensors) {
    auto name = fbb.CreateString(t.name);
    auto shape = fbb.CreateVector(t.shape);
    tensors.push_back(fb::CreateTensor(fbb, name, static_cast<uint8_t>(t.dtype), shape, static_cast<uint8_t>(t.kind),
                                       t.trainable, static_cast<fb::Storage>(t.storage), t.offset, t.nbytes,
                                       t.init_offset, t.has_init, t.checkpointed, t.channels, t.space, t.constant));
  }
  std::vector<flatbuffers::Offset<fb::Op>> ops;
  ops.reserve(spec.ops.size());
  for (const OpSpec& o : spec.ops) {
    std::vector<flatbuffers::Offset<fb::Attr>> attrs;
    for (const auto& kv : o.attrs.items()) attrs.push_back(write_attr(fbb, kv.first, kv.second));
    auto op = fbb.CreateString(o.op);
    auto name = fbb.CreateString(o.name);
    auto in = fbb.CreateVector(o.inputs);
    auto out = fbb.CreateVector(o.outputs);
    auto at = fbb.CreateVector(attrs);
    auto backend = fbb.CreateString(o.backend);
    ops.push_back(fb::CreateOp(fbb, op, name, in, out, at, backend));
  }
  std::vector<flatbuffers::Offset<fb::Function>> functions;
  for (const FunctionSpec& f : spec.functions) {
    auto name = fbb.CreateString(f.name);
    auto o = fbb.CreateVector(f.ops);
    auto in = fbb.CreateVector(f.inputs);
    auto out = fbb.CreateVector(f.outputs);
    functions.push_back(fb::CreateFunction(fbb, name, o, in, out, f.loss, f.arena_bytes));
  }
  auto tv = fbb.CreateVector(tensors);
  auto ov = fbb.CreateVector(ops);
  auto fv = fbb.CreateVector(functions);
  auto meta = fbb.CreateString(spec.metadata);
  flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<fb::MemorySpace>>> sv;
  if (!spec.spaces.empty()) {  // a host-only blob stays byte-identical to one from before memory spaces
    std::vector<flatbuffers::Offset<fb::MemorySpace>> spaces;
    for (const MemorySpaceSpec& s : spec.spaces) {
      spaces.push_back(fb::CreateMemorySpace(fbb, fbb.CreateString(s.backend), s.arena_bytes, s.persistent_bytes));
    }
    sv = fbb.CreateVector(spaces);
  }
  auto root = fb::CreateProgram(fbb, tv, ov, fv, spec.arena_bytes, spec.persistent_bytes, spec.step_tensor, meta, sv);
  fbb.Finish(root, fb::ProgramIdentifier());
  return std::vector<uint8_t>(fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize());
}

uint64_t align_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

}  // namespace

Status write_blob(const ProgramSpec& spec, std::vector<uint8_t>* out) {
  const std::vector<uint8_t> program = build_program(spec);
  const uint64_t table_end = sizeof(blob::Header) + 2 * sizeof(blob::SectionEntry);
  const uint64_t program_offset = align_up(table_end, 16);
  const uint64_t weights_offset = align_up(program_offset + program.size(), blob::kWeightAlignment);
  const uint64_t file_size = weights_offset + spec.weights.size();
  out->assign(file_size, 0);
  uint8_t* base = out->data();

  blob::SectionEntry sections[2] = {};
  sections[0].kind = blob::kSectionProgram;
  sections[0].offset = program_offset;
  sections[0].size = program.size();
  sections[0].crc = blob::crc32(program.data(), program.size());
  sections[1].kind = blob::kSectionWeights;
  sections[1].offset = weights_offset;
  sections[1].size = spec.weights.size();
  sections[1].crc = blob::crc32(spec.weights.data(), spec.weights.size());

  blob::Header header = {};
  std::memcpy(header.magic, blob::kMagic, sizeof(header.magic));
  header.version = blob::kFormatVersion;
  header.header_bytes = sizeof(blob::Header);
  header.file_size = file_size;
  header.section_count = 2;
  header.header_crc = 0;
  std::memcpy(base, &header, sizeof(header));
  std::memcpy(base + sizeof(header), sections, sizeof(sections));
  header.header_crc = blob::crc32(base, table_end);
  std::memcpy(base, &header, sizeof(header));

  std::memcpy(base + program_offset, program.data(), program.size());
  if (!spec.weights.empty()) std::memcpy(base + weights_offset, spec.weights.data(), spec.weights.size());
  return Status::ok();
}

Status write_blob_file(const ProgramSpec& spec, const std::string& path) {
  std::vector<uint8_t> bytes;
  POCK_RETURN_IF_ERROR(write_blob(spec, &bytes));
  return write_file_atomic(path, bytes.data(), bytes.size());
}

}  // namespace pock
