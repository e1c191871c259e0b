#include "runtime/engine_core.hpp"

#include <chrono>
#include <cmath>
#include <cstring>
#include <unordered_map>

#include "blob/format.hpp"
#include "program_generated.h"
#include "runtime/denormals.hpp"
#include "runtime/kernel.hpp"

namespace pock {
namespace {

uint8_t* region_base(fb::Storage storage, const uint8_t* weights, uint8_t* persistent, uint8_t* arena) {
  switch (storage) {
    case fb::Storage::Weights: return const_cast<uint8_t*>(weights);  // read-only: outputs never point here
    case fb::Storage::Persistent: return persistent;
    case fb::Storage::Arena: return arena;
  }
  return nullptr;
}

}  // namespace

Result<std::unique_ptr<EngineCore>> EngineCore::open_file(const std::string& path, const EngineOptions& options) {
  std::unique_ptr<EngineCore> engine(new EngineCore());
  POCK_RETURN_IF_ERROR(engine->file_.open(path));
  POCK_RETURN_IF_ERROR(engine->init(engine->file_.data(), engine->file_.size(), options));
  // Opening read every page of the file (the CRC check, initial values, repacking frozen
  // weights for the kernels that keep their own copy). Let them go: the pages a step reads come
  // back from the page cache on first touch, the rest (initial values, repacked weights) never
  // do, so the engine's resident memory is what its steps use.
  engine->file_.drop_resident();
  return engine;
}

Result<std::unique_ptr<EngineCore>> EngineCore::open_buffer(const void* data, size_t size, const EngineOptions& options) {
  std::unique_ptr<EngineCore> engine(new EngineCore());
  POCK_RETURN_IF_ERROR(engine->init(static_cast<const uint8_t*>(data), size, options));
  return engine;
}

EngineCore::~EngineCore() {
  for (BoundOp& op : ops_) {
    if (op.backend && op.handle && op.backend->release_op) op.backend->release_op(op.backend->context, op.handle);
  }
}

Status EngineCore::init(const uint8_t* data, size_t size, const EngineOptions& options) {
  options_ = options;
  POCK_RETURN_IF_ERROR(open_blob(data, size, VerifyOptions{}, &view_));
  const fb::Program& p = *view_.program;
  // 64 bytes past the plan: libraries that read whole vectors may read (never use) a few bytes past
  // a tensor's end (XNNPACK's XNN_EXTRA_BYTES, for the channels-last convolutions that read the
  // arena directly), and the last tensor of the plan can end where the arena does.
  POCK_RETURN_IF_ERROR(arena_.allocate(p.arena_bytes() + 64, "arena"));
  POCK_RETURN_IF_ERROR(persistent_.allocate(p.persistent_bytes(), "persistent region"));

  tensors_.resize(p.tensors()->size());
  for (flatbuffers::uoffset_t i = 0; i < p.tensors()->size(); ++i) {
    const fb::Tensor& t = *p.tensors()->Get(i);
    pock_tensor_desc& d = tensors_[i];
    d.dtype = static_cast<pock_dtype>(t.dtype());
    d.rank = t.shape() ? static_cast<int32_t>(t.shape()->size()) : 0;
    for (int r = 0; r < d.rank; ++r) d.dims[r] = t.shape()->Get(static_cast<flatbuffers::uoffset_t>(r));
    d.nbytes = t.nbytes();
    d.data = region_base(t.storage(), view_.weights, persistent_.data(), arena_.data()) + t.offset();
    d.memory_space = POCK_MEMORY_HOST;
    d.flags = t.storage() == fb::Storage::Weights ? uint32_t{POCK_TENSOR_CONSTANT} : 0u;  // blob weights are read-only
    if (t.has_init()) std::memcpy(d.data, view_.weights + t.init_offset(), t.nbytes());
    by_name_[t.name()->str()] = static_cast<int32_t>(i);
    if (t.checkpointed() && t.storage() == fb::Storage::Persistent) checkpointed_.push_back(static_cast<int32_t>(i));
    if (t.trainable()) trainable_.push_back(static_cast<int32_t>(i));
  }
  if (p.step_tensor() >= 0) step_ = static_cast<int64_t*>(tensors_[p.step_tensor()].data);

  for (const fb::Function* f : *p.functions()) {
    Function fn;
    fn.name = f->name()->str();
    if (f->ops()) fn.ops.assign(f->ops()->begin(), f->ops()->end());
    fn.loss = f->loss();
    functions_.push_back(std::move(fn));
  }
  infer_fn_ = find_function("infer");
  train_fn_ = find_function("train");
  eval_fn_ = find_function("eval");
  if (train_fn_ >= 0 && options_.rollback_on_failure) {
    plan_snapshot();
    uint64_t snapshot_bytes = 0;
    for (const SnapshotSpan& span : snapshot_spans_) snapshot_bytes += (span.bytes + 63) / 64 * 64;
    POCK_RETURN_IF_ERROR(snapshot_.allocate(snapshot_bytes, "rollback snapshot"));
  }
  return bind_ops();
}

void EngineCore::plan_snapshot() {
  // A partial-channel update's gradient covers the weight's leading rows only (the update ops'
  // schema): those rows are all a step can write.
  std::unordered_map<int32_t, size_t> written_bytes;
  const fb::Program& p = *view_.program;
  for (const fb::Op* o : *p.ops()) {
    const std::string_view op = o->op()->string_view();
    if ((op != "SgdUpdate" && op != "AdamUpdate") || !o->inputs() || o->inputs()->size() < 2) continue;
    const int32_t param = o->inputs()->Get(0), grad = o->inputs()->Get(1);
    if (param < 0 || grad < 0) continue;
    const pock_tensor_desc &w = tensors_[static_cast<size_t>(param)], &g = tensors_[static_cast<size_t>(grad)];
    size_t bytes = w.nbytes;
    if (w.rank >= 1 && g.rank == w.rank && w.dims[0] > 0 && g.dims[0] < w.dims[0]) {
      bytes = w.nbytes / static_cast<size_t>(w.dims[0]) * static_cast<size_t>(g.dims[0]);
    }
    size_t& b = written_bytes[param];
    b = std::max(b, bytes);
  }
  snapshot_spans_.clear();
  for (int32_t id : checkpointed_) {
    auto it = written_bytes.find(id);
    snapshot_spans_.push_back({id, it == written_bytes.end() ? tensors_[static_cast<size_t>(id)].nbytes : it->second});
  }
}

Status EngineCore::bind_ops() {
  backends_ = BackendSet::open(options_.backend_plugins);
  const fb::Program& p = *view_.program;
  ops_.resize(p.ops()->size());
  for (flatbuffers::uoffset_t i = 0; i < p.ops()->size(); ++i) {
    const fb::Op& o = *p.ops()->Get(i);
    BoundOp& b = ops_[i];
    const size_t nin = o.inputs() ? o.inputs()->size() : 0;
    const size_t nout = o.outputs() ? o.outputs()->size() : 0;
    b.inputs.resize(nin);
    b.outputs.resize(nout);
    for (size_t k = 0; k < nin; ++k) {
      const int32_t id = o.inputs()->Get(static_cast<flatbuffers::uoffset_t>(k));
      if (id < 0) {
        b.inputs[k] = pock_tensor_desc{};
        b.inputs[k].rank = -1;
      } else {
        b.inputs[k] = tensors_[id];
      }
    }
    for (size_t k = 0; k < nout; ++k) b.outputs[k] = tensors_[o.outputs()->Get(static_cast<flatbuffers::uoffset_t>(k))];
    if (o.attrs()) {
      // Attribute payloads point straight into the verified FlatBuffer (little-endian hosts).
      for (const fb::Attr* a : *o.attrs()) {
        pock_attr at{};
        at.name = a->name()->c_str();
        at.kind = static_cast<int32_t>(a->kind());
        at.i = a->i();
        at.f = a->f();
        at.s = a->s() ? a->s()->c_str() : "";
        if (a->ints()) { at.ints = a->ints()->data(); at.count = a->ints()->size(); }
        if (a->floats()) { at.floats = a->floats()->data(); at.count = a->floats()->size(); }
        b.attrs.push_back(at);
      }
    }
    b.desc.op = o.op()->c_str();
    b.desc.name = o.name() ? o.name()->c_str() : "";
    b.desc.num_inputs = static_cast<int32_t>(nin);
    b.desc.num_outputs = static_cast<int32_t>(nout);
    b.desc.inputs = b.inputs.data();
    b.desc.outputs = b.outputs.data();
    b.desc.num_attrs = static_cast<int32_t>(b.attrs.size());
    b.desc.attrs = b.attrs.data();
    b.desc.num_threads = options_.num_threads;

    // The blob's preferred backend wins when it can run the op; otherwise the best score.
    const std::string preferred = o.backend() ? o.backend()->str() : "";
    pock_backend_v1* chosen = nullptr;
    int32_t best = 0;
    for (pock_backend_v1* be : backends_.usable()) {
      const int32_t score = be->supports_op(be->context, &b.desc);
      if (score <= 0) continue;
      // The caller's backend (EngineOptions::backend) outranks the blob's, which outranks scores.
      const std::string& wanted = options_.backend.empty() ? preferred : options_.backend;
      if (!wanted.empty() && wanted == be->name) {
        chosen = be;
        break;
      }
      if (score > best) {
        best = score;
        chosen = be;
      }
    }
    if (!chosen) {
      std::string why = std::string("no backend has a kernel for op ") + b.desc.op + " '" + b.desc.name + "' (" +
                        dtype_name(kernel_key_dtype(b.desc)) + ")";
      if (!preferred.empty() && !backends_.find(preferred)) why += "; the blob placed it on '" + preferred + "', which is not loaded";
      for (const BackendEntry& e : backends_.entries()) {
        if (!e.status.is_ok()) why += "; " + e.status.message();
      }
      return Status(Code::kMissingKernel, why);
    }
    const pock_status s = chosen->prepare_op(chosen->context, &b.desc, &b.handle);
    if (s != POCK_OK) {
      return Status(static_cast<Code>(s), std::string("backend ") + chosen->name + " cannot prepare op " + b.desc.op +
                                              " '" + b.desc.name + "': " + chosen->last_error(chosen->context));
    }
    b.backend = chosen;
  }
  return Status::ok();
}

Status EngineCore::run(const Function& fn) {
  using Clock = std::chrono::steady_clock;
  const FlushDenormalsScope flush_denormals;  // see runtime/denormals.hpp
  for (uint32_t index : fn.ops) {
    BoundOp& b = ops_[index];
    const Clock::time_point start = op_timing_ ? Clock::now() : Clock::time_point{};
    const pock_status s = b.backend->execute_op(b.backend->context, b.handle, &b.desc);
    if (op_timing_) op_time_ns_[index] = std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count();
    if (s != POCK_OK) {
      return Status(static_cast<Code>(s), std::string("op ") + b.desc.op + " '" + b.desc.name + "' failed on backend " +
                                              b.backend->name + ": " + b.backend->last_error(b.backend->context));
    }
  }
  return Status::ok();
}

Status EngineCore::infer() {
  if (infer_fn_ < 0) return Status(Code::kNotFound, "this blob has no inference function");
  return run(functions_[infer_fn_]);
}

Status EngineCore::eval_step(float* loss) {
  if (eval_fn_ < 0) return Status(Code::kNotFound, "this blob has no eval function (compile it with a loss)");
  POCK_RETURN_IF_ERROR(run(functions_[eval_fn_]));
  if (loss && functions_[eval_fn_].loss >= 0) *loss = *static_cast<const float*>(tensors_[functions_[eval_fn_].loss].data);
  return Status::ok();
}

Status EngineCore::check_trainables_finite() const {
  for (int32_t id : trainable_) {
    const pock_tensor_desc& t = tensors_[id];
    if (t.dtype != POCK_F32) continue;
    const float* v = static_cast<const float*>(t.data);
    const size_t n = t.nbytes / sizeof(float);
    float acc = 0.0f;
    for (size_t i = 0; i < n; ++i) acc += v[i] * 0.0f;  // NaN or Inf anywhere makes acc NaN
    if (std::isnan(acc)) {
      return Status(Code::kNumerical, "parameter '" + view_.program->tensors()->Get(id)->name()->str() +
                                          "' became NaN or Inf: a gradient overflowed");
    }
  }
  return Status::ok();
}

Status EngineCore::train_step(float* loss) {
  if (train_fn_ < 0) return Status(Code::kNotFound, "this blob has no training function (compile it with a recipe)");
  const Function& fn = functions_[train_fn_];
  // Snapshot what the step may change so that a failed step leaves the model as it was.
  if (snapshot_.data()) {
    uint8_t* dst = snapshot_.data();
    for (const SnapshotSpan& span : snapshot_spans_) {
      std::memcpy(dst, tensors_[span.tensor].data, span.bytes);
      dst += (span.bytes + 63) / 64 * 64;
    }
  }
  const int64_t before = step();
  if (step_) *step_ = before + 1;
  Status s = run(fn);
  float value = fn.loss >= 0 ? *static_cast<const float*>(tensors_[fn.loss].data) : 0.0f;
  if (s.is_ok() && !std::isfinite(value)) {
    s = Status(Code::kNumerical, "loss is " + std::to_string(value) + " at step " + std::to_string(before + 1) +
                                     "; the parameters were kept as before the step");
  }
  if (s.is_ok()) s = check_trainables_finite();
  if (!s.is_ok()) {
    if (snapshot_.data()) {
      const uint8_t* src = snapshot_.data();
      for (const SnapshotSpan& span : snapshot_spans_) {
        std::memcpy(tensors_[span.tensor].data, src, span.bytes);
        src += (span.bytes + 63) / 64 * 64;
      }
    }
    if (step_) *step_ = before;
    return s;
  }
  if (loss) *loss = value;
  return Status::ok();
}

int32_t EngineCore::find_tensor(std::string_view name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? -1 : it->second;
}

int EngineCore::find_function(std::string_view name) const {
  for (size_t i = 0; i < functions_.size(); ++i) {
    if (functions_[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

Status EngineCore::tensor_info(std::string_view name, pock_tensor_info* info) const {
  const int32_t id = find_tensor(name);
  if (id < 0) return Status(Code::kNotFound, "no tensor named '" + std::string(name) + "'");
  const pock_tensor_desc& t = tensors_[id];
  info->dtype = t.dtype;
  info->rank = t.rank;
  for (int i = 0; i < POCK_TENSOR_MAX_RANK; ++i) info->dims[i] = i < t.rank ? t.dims[i] : 0;
  info->nbytes = t.nbytes;
  return Status::ok();
}

Status EngineCore::set_input(std::string_view name, const void* data, size_t nbytes) {
  const int32_t id = find_tensor(name);
  if (id < 0) return Status(Code::kNotFound, "no input named '" + std::string(name) + "'");
  const fb::Tensor& t = *view_.program->tensors()->Get(static_cast<flatbuffers::uoffset_t>(id));
  if (static_cast<TensorKind>(t.kind()) != TensorKind::kInput) {
    return Status(Code::kInvalidArgument, "'" + std::string(name) + "' is a " +
                                              tensor_kind_name(static_cast<TensorKind>(t.kind())) + ", not an input");
  }
  if (nbytes != tensors_[id].nbytes) {
    return Status(Code::kShapeMismatch, "input '" + std::string(name) + "' takes " + std::to_string(tensors_[id].nbytes) +
                                            " bytes (" + dtype_name(static_cast<DType>(t.dtype())) +
                                            shape_str(Shape(t.shape()->begin(), t.shape()->end())) + "), got " +
                                            std::to_string(nbytes));
  }
  if (!data && nbytes) return Status(Code::kInvalidArgument, "null data for input '" + std::string(name) + "'");
  if (nbytes) std::memcpy(tensors_[id].data, data, nbytes);
  return Status::ok();
}

Status EngineCore::get_output(std::string_view name, void* data, size_t nbytes) const {
  const int32_t id = find_tensor(name);
  if (id < 0) return Status(Code::kNotFound, "no tensor named '" + std::string(name) + "'");
  const fb::Tensor& t = *view_.program->tensors()->Get(static_cast<flatbuffers::uoffset_t>(id));
  if (t.storage() == fb::Storage::Arena) {
    return Status(Code::kInvalidArgument, "'" + std::string(name) + "' is an intermediate whose memory is reused; "
                                              "mark it as an output when compiling");
  }
  if (nbytes != tensors_[id].nbytes) {
    return Status(Code::kShapeMismatch, "'" + std::string(name) + "' has " + std::to_string(tensors_[id].nbytes) +
                                            " bytes, the buffer " + std::to_string(nbytes));
  }
  if (!data && nbytes) return Status(Code::kInvalidArgument, "null buffer for '" + std::string(name) + "'");
  if (nbytes) std::memcpy(data, tensors_[id].data, nbytes);
  return Status::ok();
}

Status EngineCore::get_parameter(std::string_view name, void* data, size_t nbytes) const {
  const int32_t id = find_tensor(name);
  if (id < 0 || static_cast<TensorKind>(view_.program->tensors()->Get(id)->kind()) != TensorKind::kParameter) {
    return Status(Code::kNotFound, "no parameter named '" + std::string(name) + "'");
  }
  return get_output(name, data, nbytes);
}

Status EngineCore::set_parameter(std::string_view name, const void* data, size_t nbytes) {
  const int32_t id = find_tensor(name);
  if (id < 0 || static_cast<TensorKind>(view_.program->tensors()->Get(id)->kind()) != TensorKind::kParameter) {
    return Status(Code::kNotFound, "no parameter named '" + std::string(name) + "'");
  }
  if (view_.program->tensors()->Get(id)->storage() != fb::Storage::Persistent) {
    return Status(Code::kInvalidArgument, "parameter '" + std::string(name) +
                                              "' is frozen and read from the blob; only trainable parameters can be set");
  }
  if (nbytes != tensors_[id].nbytes) {
    return Status(Code::kShapeMismatch, "parameter '" + std::string(name) + "' has " +
                                            std::to_string(tensors_[id].nbytes) + " bytes, got " + std::to_string(nbytes));
  }
  if (!data && nbytes) return Status(Code::kInvalidArgument, "null data for '" + std::string(name) + "'");
  if (nbytes) std::memcpy(tensors_[id].data, data, nbytes);
  return Status::ok();
}

void* EngineCore::tensor_data(std::string_view name) {
  const int32_t id = find_tensor(name);
  if (id < 0 || view_.program->tensors()->Get(id)->storage() == fb::Storage::Weights) return nullptr;
  return tensors_[id].data;
}

std::vector<std::string> EngineCore::op_backends() const {
  std::vector<std::string> out;
  for (const BoundOp& b : ops_) out.push_back(b.backend ? b.backend->name : "");
  return out;
}

size_t EngineCore::workspace_bytes() const {
  size_t total = 0;
  for (pock_backend_v1* b : backends_.usable()) {
    void* fn = b->get_proc_address ? b->get_proc_address(b->context, POCK_EXT_WORKSPACE_BYTES) : nullptr;
    if (fn) total += reinterpret_cast<pock_workspace_bytes_fn>(fn)(b->context);
  }
  return total;
}

int32_t EngineCore::ops_bound_to(const pock_backend_v1* backend) const {
  int32_t n = 0;
  for (const BoundOp& b : ops_) n += b.backend == backend ? 1 : 0;
  return n;
}

void EngineCore::set_op_timing(bool enabled) {
  op_timing_ = enabled;
  op_time_ns_.assign(enabled ? ops_.size() : 0, 0);
}

std::vector<std::string> EngineCore::parameter_names() const {
  std::vector<std::string> out;
  for (const fb::Tensor* t : *view_.program->tensors()) {
    if (static_cast<TensorKind>(t->kind()) == TensorKind::kParameter) out.push_back(t->name()->str());
  }
  return out;
}

uint32_t EngineCore::program_fingerprint() const {
  // Names, shapes and dtypes of checkpointed tensors: a checkpoint fits a blob when these agree.
  uint32_t crc = 0;
  for (int32_t id : checkpointed_) {
    const fb::Tensor& t = *view_.program->tensors()->Get(static_cast<flatbuffers::uoffset_t>(id));
    crc = blob::crc32(t.name()->c_str(), t.name()->size(), crc);
    const uint8_t dt = t.dtype();
    crc = blob::crc32(&dt, 1, crc);
    if (t.shape()) crc = blob::crc32(t.shape()->data(), t.shape()->size() * sizeof(int64_t), crc);
  }
  return crc;
}

}  // namespace pock
