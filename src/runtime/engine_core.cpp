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
  VerifyOptions verify;
  // A blob mapped from its file: the checksum pass need not leave all of it resident.
  if (file_.data() == data) verify.after_check = [this](const uint8_t* p, size_t n) { file_.drop_range(p, n); };
  POCK_RETURN_IF_ERROR(open_blob(data, size, verify, &view_));
  const fb::Program& p = *view_.program;
  POCK_RETURN_IF_ERROR(check_memory_budget());
  backends_ = BackendSet::open(options_.backend_plugins);
  std::vector<SpaceSizes> sizes{{"", p.arena_bytes(), p.persistent_bytes()}};
  if (p.spaces()) {
    for (const fb::MemorySpace* s : *p.spaces()) sizes.push_back({s->backend()->str(), s->arena_bytes(), s->persistent_bytes()});
  }
  POCK_RETURN_IF_ERROR(spaces_.allocate(sizes, backends_));

  tensors_.resize(p.tensors()->size());
  for (flatbuffers::uoffset_t i = 0; i < p.tensors()->size(); ++i) {
    const fb::Tensor& t = *p.tensors()->Get(i);
    pock_tensor_desc& d = tensors_[i];
    d.dtype = static_cast<pock_dtype>(t.dtype());
    d.rank = t.shape() ? static_cast<int32_t>(t.shape()->size()) : 0;
    for (int r = 0; r < d.rank; ++r) d.dims[r] = t.shape()->Get(static_cast<flatbuffers::uoffset_t>(r));
    d.nbytes = t.nbytes();
    const uint8_t space = t.space();
    place_tensor(i);
    // Blob weights and their device replicas never change while the engine is open.
    d.flags = t.storage() == fb::Storage::Weights || t.constant() ? uint32_t{POCK_TENSOR_CONSTANT} : 0u;
    if (t.has_init()) POCK_RETURN_IF_ERROR(spaces_.to_space(space, d.data, view_.weights + t.init_offset(), t.nbytes()));
    by_name_[t.name()->str()] = static_cast<int32_t>(i);
    if (t.checkpointed() && t.storage() == fb::Storage::Persistent) checkpointed_.push_back(static_cast<int32_t>(i));
    if (t.trainable()) trainable_.push_back(static_cast<int32_t>(i));
  }
  if (p.step_tensor() >= 0) step_ = static_cast<int64_t*>(tensors_[p.step_tensor()].data);
  // The initial values are copied: their pages go before the kernels read (and repack) weights,
  // so that opening never holds both.
  if (file_.data() == data) file_.drop_resident();

  for (const fb::Function* f : *p.functions()) {
    Function fn;
    fn.name = f->name()->str();
    if (f->ops()) fn.ops.assign(f->ops()->begin(), f->ops()->end());
    fn.loss = f->loss();
    for (size_t k = 0; f->inputs() && k < f->inputs()->size(); ++k) {
      const int32_t id = f->inputs()->Get(static_cast<flatbuffers::uoffset_t>(k));
      if (static_cast<TensorKind>(p.tensors()->Get(id)->kind()) == TensorKind::kInput) fn.inputs.push_back(id);
    }
    functions_.push_back(std::move(fn));
  }
  input_set_.assign(p.tensors()->size(), 0);
  infer_fn_ = find_function("infer");
  train_fn_ = find_function("train");
  eval_fn_ = find_function("eval");
  POCK_RETURN_IF_ERROR(bind_ops());
  plan_finite_check();
  // After binding: whether updates can be deferred depends on the backends that run them.
  if (train_fn_ >= 0 && options_.rollback_on_failure) POCK_RETURN_IF_ERROR(plan_snapshot());
  return Status::ok();
}

void EngineCore::place_tensor(size_t i) {
  const fb::Tensor& t = *view_.program->tensors()->Get(static_cast<flatbuffers::uoffset_t>(i));
  pock_tensor_desc& d = tensors_[i];
  uint8_t* base = t.storage() == fb::Storage::Weights      ? const_cast<uint8_t*>(view_.weights)  // outputs never point here
                  : t.storage() == fb::Storage::Persistent ? spaces_.persistent(t.space())
                                                           : spaces_.arena(t.space());
  d.data = base + t.offset();
  d.memory_space = spaces_.device(t.space()) ? POCK_MEMORY_DEVICE : POCK_MEMORY_HOST;
}

Status EngineCore::drop_failed_device(const Status& cause) {
  const int failed = spaces_.failed_space();
  if (failed <= 0 || !spaces_.device(static_cast<uint8_t>(failed))) return cause;
  const auto space = static_cast<uint8_t>(failed);
  pock_backend_v1* device = spaces_.device(space);
  const std::string name = device->name;
  backends_.mark_failed(device, Status(Code::kBackend, "backend '" + name + "' failed and was dropped: " + cause.message()));
  for (BoundOp& b : ops_) {
    if (b.backend == device && b.handle && device->release_op) device->release_op(device->context, b.handle);
    if (b.backend == device) b.handle = nullptr;
  }
  const Status moved = spaces_.move_to_host(space);
  if (!moved.is_ok()) {
    return Status(Code::kBackend, cause.message() + "; the memory of backend '" + name +
                                      "' could not be brought to the host (" + moved.message() + "): reopen the engine");
  }
  for (size_t i = 0; i < tensors_.size(); ++i) {
    if (space_of(static_cast<int32_t>(i)) == space) place_tensor(i);
  }
  plan_finite_check();
  for (uint32_t i = 0; i < ops_.size(); ++i) {
    if (op_touches_space(i, space)) POCK_RETURN_IF_ERROR(bind_op(i));
  }
  if (!snapshot_spans_.empty()) POCK_RETURN_IF_ERROR(plan_snapshot());
  return Status(cause.code(), cause.message() + "; backend '" + name +
                                  "' was dropped and its ops run on the host backends from now on");
}

bool EngineCore::op_touches_space(uint32_t index, uint8_t space) const {
  const fb::Op& o = *view_.program->ops()->Get(index);
  for (const auto* list : {o.inputs(), o.outputs()}) {
    if (!list) continue;
    for (int32_t id : *list) {
      if (id >= 0 && space_of(id) == space) return true;
    }
  }
  return false;
}

Status EngineCore::bind_ops() {
  ops_.resize(view_.program->ops()->size());
  for (uint32_t i = 0; i < ops_.size(); ++i) POCK_RETURN_IF_ERROR(bind_op(i));
  return Status::ok();
}

Status EngineCore::bind_op(uint32_t i) {
  {
    const fb::Op& o = *view_.program->ops()->Get(i);
    BoundOp& b = ops_[i];
    b = BoundOp{};
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

    if (b.desc.op == std::string_view("Copy")) {
      return bind_copy(b);
    }
    // An op whose tensors live in a device's memory runs on that device; any other op on a
    // backend that works on host memory. The blob's preferred backend wins when it can run the
    // op; otherwise the best score.
    const std::string preferred = o.backend() ? o.backend()->str() : "";
    // The verifier made sure that every tensor of a non-Copy op lives in one space.
    int32_t first = nout > 0 ? o.outputs()->Get(0) : -1;  // updates have no outputs: any present input
    for (size_t k = 0; k < nin && first < 0; ++k) first = o.inputs()->Get(static_cast<flatbuffers::uoffset_t>(k));
    pock_backend_v1* device = first >= 0 ? spaces_.device(space_of(first)) : nullptr;
    pock_backend_v1* chosen = nullptr;
    int32_t best = 0;
    for (pock_backend_v1* be : backends_.usable()) {
      if (device ? be != device : owns_memory(*be)) continue;
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
    if (!chosen && device) {
      return Status(Code::kMissingKernel, std::string("op ") + b.desc.op + " '" + b.desc.name + "' works on the memory of backend '" +
                                              device->name + "', which does not run it");
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

Status EngineCore::bind_copy(BoundOp& b) {
  const fb::Op& o = *view_.program->ops()->Get(static_cast<flatbuffers::uoffset_t>(&b - ops_.data()));
  const int32_t from = o.inputs() && o.inputs()->size() == 1 ? o.inputs()->Get(0) : -1;
  if (from < 0) return Status(Code::kInvalidBlob, std::string("Copy '") + b.desc.name + "' has no input");
  b.copy_from = space_of(from);
  b.copy_to = space_of(o.outputs()->Get(0));
  // One side is host memory: the compiler routes device-to-device moves through the host, and a
  // Copy within one device space would be a plain device copy.
  if (spaces_.device(b.copy_from) && spaces_.device(b.copy_to) && b.copy_from != b.copy_to) {
    return Status(Code::kInvalidBlob, std::string("Copy '") + b.desc.name + "' moves bytes between two devices");
  }
  return Status::ok();
}

Status EngineCore::run_copy(const BoundOp& b) const {
  void* dst = b.outputs[0].data;
  const void* src = b.inputs[0].data;
  const size_t n = b.outputs[0].nbytes;
  if (b.copy_from == b.copy_to) return spaces_.within_space(b.copy_to, dst, src, n);
  if (spaces_.device(b.copy_to)) return spaces_.to_space(b.copy_to, dst, src, n);
  return spaces_.from_space(b.copy_from, dst, src, n);
}

Status EngineCore::check_memory_budget() const {
  const uint64_t budget = options_.memory_budget_bytes;
  if (budget == 0) return Status::ok();
  const fb::Program& p = *view_.program;
  uint64_t regions = p.arena_bytes() + p.persistent_bytes();
  if (p.spaces()) {
    for (const fb::MemorySpace* s : *p.spaces()) regions += s->arena_bytes() + s->persistent_bytes();
  }
  // The rollback snapshot holds (at most) every checkpointed tensor once more.
  uint64_t snapshot = 0;
  const bool trains = [&] {
    for (const fb::Function* f : *p.functions()) {
      if (f->name()->string_view() == "train") return true;
    }
    return false;
  }();
  if (trains && options_.rollback_on_failure) {
    for (const fb::Tensor* t : *p.tensors()) {
      if (t->checkpointed() && t->storage() == fb::Storage::Persistent &&
          __builtin_add_overflow(snapshot, t->nbytes(), &snapshot)) {
        snapshot = UINT64_MAX / 2;  // many hostile aliases: far past any budget anyway
      }
    }
  }
  // Regions are bounded by the verifier (each < 2^48), so their sum and this one cannot overflow.
  const uint64_t total = regions + snapshot;
  if (total <= budget) return Status::ok();
  return Status(Code::kOutOfMemory, "the blob plans " + std::to_string(total) + " bytes (arenas and persistent regions " +
                                        std::to_string(regions) + ", rollback snapshot " + std::to_string(snapshot) +
                                        "), more than the memory budget of " + std::to_string(budget) + " bytes");
}

Status EngineCore::check_inputs_set(const Function& fn) const {
  for (int32_t id : fn.inputs) {
    if (!input_set_[id]) {
      return Status(Code::kInvalidArgument, "input '" + view_.program->tensors()->Get(id)->name()->str() +
                                                "' was never set: the " + fn.name + " function reads it (set_input)");
    }
  }
  return Status::ok();
}

Status EngineCore::run(const Function& fn) { return run_ops(fn, 0, fn.ops.size()); }

Status EngineCore::run_ops(const Function& fn, size_t begin, size_t end) {
  using Clock = std::chrono::steady_clock;
  const FlushDenormalsScope flush_denormals;  // see runtime/denormals.hpp
  for (size_t position = begin; position < end; ++position) {
    const uint32_t index = fn.ops[position];
    BoundOp& b = ops_[index];
    const Clock::time_point start = op_timing_ ? Clock::now() : Clock::time_point{};
    if (!b.backend) {
      Status copied = run_copy(b);
      if (op_timing_) op_time_ns_[index] = std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count();
      if (!copied.is_ok()) return Status(copied.code(), std::string("op Copy '") + b.desc.name + "' failed: " + copied.message());
      continue;
    }
    const pock_status s = b.backend->execute_op(b.backend->context, b.handle, &b.desc);
    if (op_timing_) {
      // A device runs the op after execute_op returns: wait for it, or the time is the launch's.
      if (s == POCK_OK) POCK_RETURN_IF_ERROR(spaces_.synchronize());
      op_time_ns_[index] = std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count();
    }
    if (s != POCK_OK) {
      if (s == POCK_ERR_BACKEND) spaces_.set_failed_space(spaces_.space_of_device(b.backend));
      return Status(static_cast<Code>(s), std::string("op ") + b.desc.op + " '" + b.desc.name + "' failed on backend " +
                                              b.backend->name + ": " + b.backend->last_error(b.backend->context));
    }
  }
  return spaces_.synchronize();  // a device that runs ops asynchronously reports their failures here
}

Status EngineCore::infer() {
  if (infer_fn_ < 0) return Status(Code::kNotFound, "this blob has no inference function");
  POCK_RETURN_IF_ERROR(check_inputs_set(functions_[infer_fn_]));
  const Status s = run(functions_[infer_fn_]);
  return s.is_ok() ? s : drop_failed_device(s);
}

Status EngineCore::run_function(std::string_view name) {
  const int f = find_function(name);
  if (f < 0) return Status(Code::kNotFound, "this blob has no function '" + std::string(name) + "'");
  if (f == train_fn_ || f == eval_fn_) {
    return Status(Code::kInvalidArgument, "'" + std::string(name) + "' runs through train_step / eval_step");
  }
  POCK_RETURN_IF_ERROR(check_inputs_set(functions_[f]));
  const Status s = run(functions_[f]);
  return s.is_ok() ? s : drop_failed_device(s);
}

Status EngineCore::eval_step(float* loss) {
  if (eval_fn_ < 0) return Status(Code::kNotFound, "this blob has no eval function (compile it with a loss)");
  POCK_RETURN_IF_ERROR(check_inputs_set(functions_[eval_fn_]));
  const Status s = run(functions_[eval_fn_]);
  if (!s.is_ok()) return drop_failed_device(s);
  if (loss && functions_[eval_fn_].loss >= 0) *loss = *static_cast<const float*>(tensors_[functions_[eval_fn_].loss].data);
  return Status::ok();
}

Status EngineCore::train_step(float* loss) {
  if (train_fn_ < 0) return Status(Code::kNotFound, "this blob has no training function (compile it with a recipe)");
  const Function& fn = functions_[train_fn_];
  POCK_RETURN_IF_ERROR(check_inputs_set(fn));
  // Snapshot what the step may change so that a failed step leaves the model as it was.
  const Status saved = save_snapshot();
  if (!saved.is_ok()) return drop_failed_device(saved);
  const int64_t before = step();
  if (step_) *step_ = before + 1;
  const bool deferred = updates_from_ < fn.ops.size();
  Status s = run_ops(fn, 0, deferred ? updates_from_ : fn.ops.size());
  float value = fn.loss >= 0 ? *static_cast<const float*>(tensors_[fn.loss].data) : 0.0f;
  if (s.is_ok() && !std::isfinite(value)) {
    s = Status(Code::kNumerical, "loss is " + std::to_string(value) + " at step " + std::to_string(before + 1));
  }
  if (deferred && s.is_ok()) s = check_update_inputs();
  if (deferred && s.is_ok()) {
    // Host updates over finite, bounded gradients: nothing below can fail (engine_rollback.cpp: kLargestGradient).
    s = run_ops(fn, updates_from_, fn.ops.size());
    if (s.is_ok()) s = check_trainables_finite();
    if (!s.is_ok()) {
      return Status(s.code(), s.message() + "; this happened in the updates, after the gradients were checked, so the "
                                            "weights may be partly updated");
    }
  }
  if (s.is_ok() && !deferred) s = check_trainables_finite();
  if (!s.is_ok()) {
    (void)spaces_.synchronize();  // let in-flight device work finish before the parameters are put back
    const Status restored = restore_snapshot();
    if (step_) *step_ = before;
    if (!restored.is_ok()) {
      return Status(s.code(), s.message() + "; restoring the parameters failed too: " + restored.message());
    }
    // Say what the caller now holds: with rollback off nothing was saved, so nothing came back.
    s = Status(s.code(), s.message() + (options_.rollback_on_failure
                                            ? "; the parameters and optimizer state are as before the step"
                                            : "; rollback_on_failure is off: the parameters and optimizer state are "
                                              "as the failed step left them"));
    return drop_failed_device(s);
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
  if (nbytes) POCK_RETURN_IF_ERROR(write_tensor(id, data));
  input_set_[id] = 1;
  return Status::ok();
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
  return nbytes ? read_tensor(id, data) : Status::ok();
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
  return nbytes ? write_tensor(id, data) : Status::ok();
  return Status::ok();
}

void* EngineCore::tensor_data(std::string_view name) {
  const int32_t id = find_tensor(name);
  if (id < 0 || view_.program->tensors()->Get(id)->storage() == fb::Storage::Weights) return nullptr;
  if (spaces_.device(space_of(id))) return nullptr;  // device memory: only copies reach it
  input_set_[id] = 1;  // the caller fills it in place
  return tensors_[id].data;
}

size_t EngineCore::arena_bytes() const { return view_.program->arena_bytes(); }
size_t EngineCore::persistent_bytes() const { return view_.program->persistent_bytes(); }

uint8_t EngineCore::space_of(int32_t id) const {
  return view_.program->tensors()->Get(static_cast<flatbuffers::uoffset_t>(id))->space();
}

Status EngineCore::read_tensor(int32_t id, void* dst) const {
  const pock_tensor_desc& t = tensors_[static_cast<size_t>(id)];
  return spaces_.from_space(space_of(id), dst, t.data, t.nbytes);
}

Status EngineCore::write_tensor(int32_t id, const void* src) {
  const pock_tensor_desc& t = tensors_[static_cast<size_t>(id)];
  return spaces_.to_space(space_of(id), t.data, src, t.nbytes);
}

std::vector<std::string> EngineCore::op_backends() const {
  std::vector<std::string> out;
  for (const BoundOp& b : ops_) {
    if (b.backend) {
      out.push_back(b.backend->name);
    } else {
      const uint8_t device = spaces_.device(b.copy_to) ? b.copy_to : b.copy_from;
      out.push_back(spaces_.device(device) ? "copy:" + spaces_.backend_name(device) : "copy");
    }
  }
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
