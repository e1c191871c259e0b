#include "blob/reader.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <string>

#include "blob/format.hpp"
#include "ir/op_schema.hpp"
#include "program_generated.h"

namespace pock {
namespace {

Status bad(const std::string& what) { return Status(Code::kInvalidBlob, what); }

bool add_overflows(uint64_t a, uint64_t b, uint64_t* out) { return __builtin_add_overflow(a, b, out); }

// Bounds with overflow checks: [offset, offset+size) inside [0, limit).
bool in_bounds(uint64_t offset, uint64_t size, uint64_t limit) {
  uint64_t end = 0;
  return !add_overflows(offset, size, &end) && end <= limit;
}

Status check_header(const uint8_t* data, size_t size, const blob::SectionEntry** program,
                    const blob::SectionEntry** weights) {
  if (data == nullptr) return bad("no data");
  if (size < sizeof(blob::Header)) return bad("truncated: " + std::to_string(size) + " bytes, a header needs 64");
  blob::Header h;
  std::memcpy(&h, data, sizeof(h));
  if (std::memcmp(h.magic, blob::kMagic, sizeof(h.magic)) != 0) return bad("not a PockEngine blob (bad magic)");
  if (h.version != blob::kFormatVersion) {
    return bad("format version " + std::to_string(h.version) + " is not supported (this runtime reads version " +
               std::to_string(blob::kFormatVersion) + ")");
  }
  if (h.header_bytes != sizeof(blob::Header)) return bad("header size " + std::to_string(h.header_bytes) + " is wrong");
  if (h.file_size != size) {
    return bad("blob is " + std::to_string(size) + " bytes but its header says " + std::to_string(h.file_size) +
               " (truncated or padded)");
  }
  if (h.section_count == 0 || h.section_count > blob::kMaxSections) {
    return bad("section count " + std::to_string(h.section_count) + " is out of range");
  }
  const uint64_t table_end = sizeof(blob::Header) + uint64_t{h.section_count} * sizeof(blob::SectionEntry);
  if (table_end > size) return bad("section table runs past the end of the blob");
  blob::Header zeroed = h;
  zeroed.header_crc = 0;
  uint32_t crc = blob::crc32(&zeroed, sizeof(zeroed));
  crc = blob::crc32(data + sizeof(blob::Header), table_end - sizeof(blob::Header), crc);
  if (crc != h.header_crc) return bad("header checksum mismatch");
  const auto* table = reinterpret_cast<const blob::SectionEntry*>(data + sizeof(blob::Header));
  *program = nullptr;
  *weights = nullptr;
  for (uint32_t i = 0; i < h.section_count; ++i) {
    const blob::SectionEntry& s = table[i];
    if (!in_bounds(s.offset, s.size, size)) return bad("section " + std::to_string(i) + " runs past the end of the blob");
    if (s.offset < table_end) return bad("section " + std::to_string(i) + " overlaps the header");
    const blob::SectionEntry** slot = s.kind == blob::kSectionProgram ? program
                                      : s.kind == blob::kSectionWeights ? weights
                                                                        : nullptr;
    if (slot == nullptr) continue;  // unknown sections are skipped: later minor versions may add some
    if (*slot) return bad("section kind " + std::to_string(s.kind) + " appears twice");
    *slot = &s;
  }
  if (!*program) return bad("no program section");
  if (!*weights) return bad("no weights section");
  if ((*weights)->offset % blob::kWeightAlignment != 0) return bad("weights section is not 64-byte aligned");
  if ((*program)->offset % 8 != 0) return bad("program section is not 8-byte aligned");
  return Status::ok();
}

template <typename V>
size_t vsize(const V* v) { return v ? v->size() : 0; }

// FlatBuffers' verifier checks a vector's length prefix for 4-byte alignment only; 64-bit
// elements are read in place (by the verifier, the runtime and kernels), so they must be 8-byte
// aligned or each read is undefined behaviour.
template <typename T>
bool aligned_vector(const flatbuffers::Vector<T>* v) {
  return !v || v->size() == 0 || reinterpret_cast<uintptr_t>(v->data()) % alignof(T) == 0;
}

uint64_t align_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

size_t num_spaces(const fb::Program& p) { return 1 + vsize(p.spaces()); }

// Size of a tensor's region: the host's from the program, a device space's from its entry.
uint64_t region_bytes(const fb::Program& p, uint8_t space, fb::Storage storage) {
  if (space == 0) return storage == fb::Storage::Arena ? p.arena_bytes() : p.persistent_bytes();
  const fb::MemorySpace* s = p.spaces()->Get(space - 1u);
  return storage == fb::Storage::Arena ? s->arena_bytes() : s->persistent_bytes();
}

Status check_tensor(const fb::Tensor& t, size_t index, const fb::Program& p, uint64_t weights_size) {
  const std::string where = "tensor " + std::to_string(index) + " '" + t.name()->str() + "'";
  if (t.dtype() >= kNumDTypes) return bad(where + ": unknown dtype " + std::to_string(t.dtype()));
  if (t.kind() > static_cast<uint8_t>(TensorKind::kOutput)) return bad(where + ": unknown kind");
  const size_t rank = vsize(t.shape());
  if (!aligned_vector(t.shape())) return bad(where + ": shape is not 8-byte aligned");
  if (rank > static_cast<size_t>(kMaxRank)) return bad(where + ": rank " + std::to_string(rank) + " exceeds 8");
  uint64_t elements = 1;
  for (size_t i = 0; i < rank; ++i) {
    const int64_t d = t.shape()->Get(static_cast<flatbuffers::uoffset_t>(i));
    if (d < 0) return bad(where + ": negative dimension");
    if (__builtin_mul_overflow(elements, static_cast<uint64_t>(d), &elements)) return bad(where + ": size overflows");
  }
  uint64_t bytes = 0;
  const uint64_t esize = dtype_size(static_cast<DType>(t.dtype()));
  if (__builtin_mul_overflow(elements, esize, &bytes) || bytes != t.nbytes()) {
    return bad(where + ": nbytes " + std::to_string(t.nbytes()) + " does not match its shape and dtype");
  }
  if (t.offset() % esize != 0) return bad(where + ": offset is not aligned to its dtype");
  if (t.space() >= num_spaces(p)) return bad(where + ": memory space " + std::to_string(t.space()) + " does not exist");
  uint64_t limit = 0;
  const char* region = "";
  switch (t.storage()) {
    case fb::Storage::Weights:
      if (t.space() != 0) return bad(where + ": blob weights are host memory, not memory space " + std::to_string(t.space()));
      limit = weights_size;
      region = "weights section";
      break;
    case fb::Storage::Persistent: limit = region_bytes(p, t.space(), t.storage()); region = "persistent region"; break;
    case fb::Storage::Arena: limit = region_bytes(p, t.space(), t.storage()); region = "arena"; break;
    default: return bad(where + ": unknown storage");
  }
  if (!in_bounds(t.offset(), t.nbytes(), limit)) {
    return bad(where + ": offset " + std::to_string(t.offset()) + " + " + std::to_string(t.nbytes()) +
               " bytes runs past the " + region + " (" + std::to_string(limit) + " bytes)");
  }
  if (t.has_init()) {
    if (t.storage() != fb::Storage::Persistent) return bad(where + ": only persistent tensors carry an initial value");
    if (!in_bounds(t.init_offset(), t.nbytes(), weights_size)) return bad(where + ": initial value runs past the weights section");
  }
  return Status::ok();
}

Status check_attr(const fb::Attr& a, const std::string& where) {
  if (!aligned_vector(a.ints()) || !aligned_vector(a.floats())) {
    return bad(where + ": attribute '" + a.name()->str() + "' list is not 8-byte aligned");
  }
  switch (a.kind()) {
    case fb::AttrKind::Int: case fb::AttrKind::Float: return Status::ok();
    case fb::AttrKind::String: if (!a.s()) return bad(where + ": string attribute '" + a.name()->str() + "' has no value"); return Status::ok();
    case fb::AttrKind::Ints: if (!a.ints()) return bad(where + ": attribute '" + a.name()->str() + "' has no list"); return Status::ok();
    case fb::AttrKind::Floats: if (!a.floats()) return bad(where + ": attribute '" + a.name()->str() + "' has no list"); return Status::ok();
    default: return bad(where + ": attribute '" + a.name()->str() + "' has an unknown kind");
  }
}

Attrs to_attrs(const flatbuffers::Vector<flatbuffers::Offset<fb::Attr>>* attrs) {
  Attrs out;
  if (!attrs) return out;
  for (const fb::Attr* a : *attrs) {
    switch (a->kind()) {
      case fb::AttrKind::Int: out.set(a->name()->str(), a->i()); break;
      case fb::AttrKind::Float: out.set(a->name()->str(), a->f()); break;
      case fb::AttrKind::String: out.set(a->name()->str(), a->s()->str()); break;
      case fb::AttrKind::Ints: out.set(a->name()->str(), std::vector<int64_t>(a->ints()->begin(), a->ints()->end())); break;
      case fb::AttrKind::Floats: out.set(a->name()->str(), std::vector<double>(a->floats()->begin(), a->floats()->end())); break;
      default: break;
    }
  }
  return out;
}

Status check_op(const fb::Op& o, size_t index, const fb::Program& p) {
  const size_t ntensors = vsize(p.tensors());
  const std::string where = "op " + std::to_string(index) + " " + o.op()->str() + " '" + (o.name() ? o.name()->str() : "") + "'";
  std::vector<TensorType> in_storage(vsize(o.inputs()));
  std::vector<const TensorType*> in_types;
  for (size_t i = 0; i < vsize(o.inputs()); ++i) {
    const int32_t id = o.inputs()->Get(static_cast<flatbuffers::uoffset_t>(i));
    if (id == -1) {
      in_types.push_back(nullptr);
      continue;
    }
    if (id < 0 || static_cast<size_t>(id) >= ntensors) return bad(where + ": input " + std::to_string(i) + " is tensor " + std::to_string(id) + ", out of range");
    const fb::Tensor* t = p.tensors()->Get(static_cast<flatbuffers::uoffset_t>(id));
    in_storage[i].dtype = static_cast<DType>(t->dtype());
    if (t->shape()) in_storage[i].shape.assign(t->shape()->begin(), t->shape()->end());
    in_types.push_back(&in_storage[i]);
  }
  for (size_t i = 0; i < vsize(o.outputs()); ++i) {
    const int32_t id = o.outputs()->Get(static_cast<flatbuffers::uoffset_t>(i));
    if (id < 0 || static_cast<size_t>(id) >= ntensors) return bad(where + ": output " + std::to_string(i) + " is out of range");
    const fb::Tensor* out = p.tensors()->Get(static_cast<flatbuffers::uoffset_t>(id));
    if (out->storage() == fb::Storage::Weights || out->constant()) {
      return bad(where + ": output " + std::to_string(i) + " is a read-only weight");
    }
  }
  if (o.attrs()) {
    for (const fb::Attr* a : *o.attrs()) POCK_RETURN_IF_ERROR(check_attr(*a, where));
  }
  // A kernel sees the tensors of one memory space; only a Copy moves bytes between two.
  if (o.op()->string_view() != "Copy") {
    int space = -1;
    for (const auto* list : {o.inputs(), o.outputs()}) {
      for (size_t i = 0; i < vsize(list); ++i) {
        const int32_t id = list->Get(static_cast<flatbuffers::uoffset_t>(i));
        if (id < 0) continue;
        const int s = p.tensors()->Get(static_cast<flatbuffers::uoffset_t>(id))->space();
        if (space >= 0 && s != space) return bad(where + ": reads or writes tensors of two memory spaces");
        space = s;
      }
    }
  }
  std::vector<TensorType> outs;
  const Attrs attrs = to_attrs(o.attrs());
  Status s = infer_types(o.op()->str(), o.name() ? o.name()->str() : "", in_types, attrs, &outs);
  if (!s.is_ok()) {
    if (s.code() == Code::kUnsupportedOp) return s;
    return bad(where + ": " + s.message());
  }
  if (outs.size() != vsize(o.outputs())) {
    return bad(where + ": has " + std::to_string(vsize(o.outputs())) + " outputs, its schema gives " + std::to_string(outs.size()));
  }
  for (size_t i = 0; i < outs.size(); ++i) {
    const fb::Tensor* t = p.tensors()->Get(o.outputs()->Get(static_cast<flatbuffers::uoffset_t>(i)));
    Shape shape;
    if (t->shape()) shape.assign(t->shape()->begin(), t->shape()->end());
    if (static_cast<DType>(t->dtype()) != outs[i].dtype || shape != outs[i].shape) {
      return bad(where + ": output '" + t->name()->str() + "' is " + dtype_name(static_cast<DType>(t->dtype())) +
                 shape_str(shape) + " but the op produces " + dtype_name(outs[i].dtype) + shape_str(outs[i].shape));
    }
  }
  return Status::ok();
}

Status check_function(const fb::Function& f, const fb::Program& p) {
  const std::string where = "function '" + f.name()->str() + "'";
  const size_t nops = vsize(p.ops());
  const size_t ntensors = vsize(p.tensors());
  for (size_t i = 0; i < vsize(f.ops()); ++i) {
    if (f.ops()->Get(static_cast<flatbuffers::uoffset_t>(i)) >= nops) return bad(where + ": op index out of range");
  }
  for (const auto* list : {f.inputs(), f.outputs()}) {
    for (size_t i = 0; i < vsize(list); ++i) {
      const int32_t id = list->Get(static_cast<flatbuffers::uoffset_t>(i));
      if (id < 0 || static_cast<size_t>(id) >= ntensors) return bad(where + ": signature tensor out of range");
      const fb::Tensor* t = p.tensors()->Get(static_cast<flatbuffers::uoffset_t>(id));
      if (t->storage() != fb::Storage::Persistent || t->space() != 0) {
        return bad(where + ": signature tensor is not in the persistent region of host memory");
      }
    }
  }
  if (f.loss() != -1) {
    if (f.loss() < 0 || static_cast<size_t>(f.loss()) >= ntensors) return bad(where + ": loss tensor out of range");
    const fb::Tensor* t = p.tensors()->Get(static_cast<flatbuffers::uoffset_t>(f.loss()));
    if (t->dtype() != static_cast<uint8_t>(DType::kF32) || t->nbytes() != 4 || t->storage() != fb::Storage::Persistent ||
        t->space() != 0) {
      return bad(where + ": loss must be a persistent f32 scalar in host memory");
    }
  }
  if (f.arena_bytes() > p.arena_bytes()) return bad(where + ": arena larger than the program's");
  return Status::ok();
}

}  // namespace

Status open_blob(const uint8_t* data, size_t size, const VerifyOptions& options, BlobView* view) {
  const blob::SectionEntry* ps = nullptr;
  const blob::SectionEntry* ws = nullptr;
  POCK_RETURN_IF_ERROR(check_header(data, size, &ps, &ws));
  if (blob::crc32(data + ps->offset, ps->size) != ps->crc) return bad("program section checksum mismatch");
  if (options.check_weights_crc) {
    constexpr size_t kStretch = size_t{16} << 20;
    uint32_t crc = 0;
    for (size_t at = 0; at < ws->size; at += kStretch) {
      const size_t n = std::min<size_t>(kStretch, ws->size - at);
      crc = blob::crc32(data + ws->offset + at, n, crc);
      if (options.after_check) options.after_check(data + ws->offset + at, n);
    }
    if (crc != ws->crc) return bad("weights section checksum mismatch");
  }
  const uint8_t* pdata = data + ps->offset;
  if (reinterpret_cast<uintptr_t>(pdata) % 8 != 0) {
    return bad("program section is not 8-byte aligned in memory: pass the blob in an 8-byte aligned buffer");
  }
  flatbuffers::Verifier verifier(pdata, ps->size, /*max_depth=*/16, /*max_tables=*/1u << 26);
  if (!fb::VerifyProgramBuffer(verifier)) return bad("program section fails FlatBuffer verification");
  const fb::Program* p = fb::GetProgram(pdata);
  if (!p->tensors() || !p->ops() || !p->functions()) return bad("program lacks tensors, ops or functions");
  constexpr uint64_t kRegionLimit = uint64_t{1} << 48;
  constexpr size_t kMaxSpaces = 255;  // Tensor.space is a byte
  if (vsize(p->spaces()) > kMaxSpaces - 1) return bad("too many memory spaces");
  const size_t spaces = num_spaces(*p);
  for (size_t s = 0; s < spaces; ++s) {
    for (fb::Storage storage : {fb::Storage::Arena, fb::Storage::Persistent}) {
      if (region_bytes(*p, static_cast<uint8_t>(s), storage) > kRegionLimit) return bad("region size is absurd");
    }
  }
  // Bytes the tensors of each region reach: [space][0 arena, 1 persistent].
  std::vector<std::array<uint64_t, 2>> ends(spaces, {0, 0});
  for (size_t i = 0; i < p->tensors()->size(); ++i) {
    const fb::Tensor& t = *p->tensors()->Get(static_cast<flatbuffers::uoffset_t>(i));
    POCK_RETURN_IF_ERROR(check_tensor(t, i, *p, ws->size));
    const uint64_t end = t.offset() + t.nbytes();  // in bounds, so no overflow
    if (t.storage() == fb::Storage::Arena) ends[t.space()][0] = std::max(ends[t.space()][0], end);
    if (t.storage() == fb::Storage::Persistent) ends[t.space()][1] = std::max(ends[t.space()][1], end);
  }
  // A region larger than its tensors need would only make the engine allocate (and zero) memory
  // for nothing: one corrupt size field must not cost gigabytes at load.
  constexpr uint64_t kRegionRounding = 64;  // the planner may round a region up to 64 bytes
  for (size_t s = 0; s < spaces; ++s) {
    const std::string space = s == 0 ? "" : " of memory space " + std::to_string(s);
    const uint64_t arena = region_bytes(*p, static_cast<uint8_t>(s), fb::Storage::Arena);
    const uint64_t persistent = region_bytes(*p, static_cast<uint8_t>(s), fb::Storage::Persistent);
    if (arena > align_up(ends[s][0], kRegionRounding)) {
      return bad("arena" + space + " of " + std::to_string(arena) + " bytes is larger than its tensors need (" +
                 std::to_string(ends[s][0]) + ")");
    }
    if (persistent > align_up(ends[s][1], kRegionRounding)) {
      return bad("persistent region" + space + " of " + std::to_string(persistent) +
                 " bytes is larger than its tensors need (" + std::to_string(ends[s][1]) + ")");
    }
  }
  for (size_t i = 0; i < p->ops()->size(); ++i) {
    const fb::Op* o = p->ops()->Get(static_cast<flatbuffers::uoffset_t>(i));
    POCK_RETURN_IF_ERROR(check_op(*o, i, *p));
  }
  for (const fb::Function* f : *p->functions()) POCK_RETURN_IF_ERROR(check_function(*f, *p));
  for (size_t i = 0; i < p->functions()->size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (p->functions()->Get(i)->name()->str() == p->functions()->Get(j)->name()->str()) {
        return bad("function '" + p->functions()->Get(i)->name()->str() + "' appears twice");
      }
    }
  }
  if (p->step_tensor() != -1) {
    if (p->step_tensor() < 0 || static_cast<size_t>(p->step_tensor()) >= p->tensors()->size()) return bad("step tensor out of range");
    const fb::Tensor* t = p->tensors()->Get(static_cast<flatbuffers::uoffset_t>(p->step_tensor()));
    if (t->dtype() != static_cast<uint8_t>(DType::kI64) || t->nbytes() != 8 || t->storage() != fb::Storage::Persistent ||
        t->space() != 0) {
      return bad("step tensor must be a persistent i64 scalar in host memory");
    }
    if (t->has_init()) {
      int64_t first_step = 0;
      std::memcpy(&first_step, data + ws->offset + t->init_offset(), sizeof(first_step));
      if (first_step < 0) return bad("step tensor starts at " + std::to_string(first_step) + ", a negative step");
    }
  }
  view->program = p;
  view->weights = data + ws->offset;
  view->weights_size = ws->size;
  return Status::ok();
}

Result<ProgramSpec> read_program_spec(const BlobView& view, bool with_weights) {
  ProgramSpec spec;
  const fb::Program* p = view.program;
  for (const fb::Tensor* t : *p->tensors()) {
    TensorSpec s;
    s.name = t->name()->str();
    s.dtype = static_cast<DType>(t->dtype());
    if (t->shape()) s.shape.assign(t->shape()->begin(), t->shape()->end());
    s.kind = static_cast<TensorKind>(t->kind());
    s.trainable = t->trainable();
    s.storage = static_cast<Storage>(t->storage());
    s.offset = t->offset();
    s.nbytes = t->nbytes();
    s.has_init = t->has_init();
    s.init_offset = t->init_offset();
    s.checkpointed = t->checkpointed();
    s.channels = t->channels();
    s.space = t->space();
    s.constant = t->constant();
    spec.tensors.push_back(std::move(s));
  }
  for (const fb::Op* o : *p->ops()) {
    OpSpec s;
    s.op = o->op()->str();
    if (o->name()) s.name = o->name()->str();
    if (o->inputs()) s.inputs.assign(o->inputs()->begin(), o->inputs()->end());
    if (o->outputs()) s.outputs.assign(o->outputs()->begin(), o->outputs()->end());
    s.attrs = to_attrs(o->attrs());
    if (o->backend()) s.backend = o->backend()->str();
    spec.ops.push_back(std::move(s));
  }
  for (const fb::Function* f : *p->functions()) {
    FunctionSpec s;
    s.name = f->name()->str();
    if (f->ops()) s.ops.assign(f->ops()->begin(), f->ops()->end());
    if (f->inputs()) s.inputs.assign(f->inputs()->begin(), f->inputs()->end());
    if (f->outputs()) s.outputs.assign(f->outputs()->begin(), f->outputs()->end());
    s.loss = f->loss();
    s.arena_bytes = f->arena_bytes();
    spec.functions.push_back(std::move(s));
  }
  spec.arena_bytes = p->arena_bytes();
  spec.persistent_bytes = p->persistent_bytes();
  spec.step_tensor = p->step_tensor();
  if (p->spaces()) {
    for (const fb::MemorySpace* s : *p->spaces()) {
      spec.spaces.push_back({s->backend()->str(), s->arena_bytes(), s->persistent_bytes()});
    }
  }
  if (p->metadata()) spec.metadata = p->metadata()->str();
  if (with_weights) spec.weights.assign(view.weights, view.weights + view.weights_size);
  return spec;
}

}  // namespace pock
