// How a failed training step leaves the weights as they were: what the step can write is planned
// at open (a snapshot of the written rows, or, for updates deferred after the backward, a check
// of their inputs instead of a copy), saved before the step and restored when it fails; and the
// check that the trained parameters are still finite after it.
#include <algorithm>
#include <cmath>
#include <unordered_map>
#include <unordered_set>

#include "program_generated.h"
#include "runtime/engine_core.hpp"
#include "runtime/finite_check.hpp"

namespace pock {

Status EngineCore::plan_snapshot() {
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
  std::unordered_set<int32_t> only_updates_write;
  POCK_RETURN_IF_ERROR(plan_deferred_updates(&only_updates_write));
  snapshot_spans_.clear();
  std::vector<uint64_t> bytes_in(spaces_.count(), 0);  // snapshot bytes per memory space
  auto rounded = [](size_t n) { return (n + 63) / 64 * 64; };
  for (int32_t id : checkpointed_) {
    if (only_updates_write.count(id)) continue;
    auto it = written_bytes.find(id);
    const size_t bytes = it == written_bytes.end() ? tensors_[static_cast<size_t>(id)].nbytes : it->second;
    const uint8_t space = spaces_.device(space_of(id)) ? space_of(id) : 0;  // host memory is all one
    snapshot_spans_.push_back({id, bytes, space, reinterpret_cast<uint8_t*>(bytes_in[space])});
    bytes_in[space] += rounded(bytes);
  }
  // Each space keeps its snapshot in its own memory, so saving and restoring it copies nothing
  // across spaces.
  std::vector<uint8_t*> base(spaces_.count(), nullptr);
  POCK_RETURN_IF_ERROR(snapshot_.allocate(bytes_in[0], "rollback snapshot"));
  base[0] = snapshot_.data();
  for (uint8_t s = 1; s < spaces_.count(); ++s) {
    if (spaces_.device(s)) POCK_RETURN_IF_ERROR(spaces_.allocate_extra(s, bytes_in[s], &base[s], "rollback snapshot"));
  }
  for (SnapshotSpan& span : snapshot_spans_) span.slot = base[span.space] + reinterpret_cast<uintptr_t>(span.slot);
  return Status::ok();
}

namespace {

bool is_update(std::string_view op) { return op == "SgdUpdate" || op == "AdamUpdate"; }

// The largest gradient a deferred update accepts: its square (Adam's second moment) and any sum
// of such terms a momentum buffer can reach stay far below f32's range, so from finite inputs
// below it the updates cannot make a weight or a state non-finite.
constexpr float kLargestGradient = 1e15f;
// With a learning rate up to this, lr times such a buffer stays finite too.
constexpr double kLargestDeferredLr = 1e6;

}  // namespace

Status EngineCore::plan_deferred_updates(std::unordered_set<int32_t>* written) {
  updates_from_ = SIZE_MAX;
  update_inputs_.clear();
  written->clear();
  const Function& fn = functions_[static_cast<size_t>(train_fn_)];
  const fb::Program& p = *view_.program;
  size_t first = fn.ops.size();
  for (size_t i = 0; i < fn.ops.size(); ++i) {
    const std::string_view op = p.ops()->Get(fn.ops[i])->op()->string_view();
    if (op == "AccumulateGrad") return Status::ok();  // accumulators change before the updates
    if (is_update(op) && first == fn.ops.size()) first = i;
    if (!is_update(op) && first < fn.ops.size()) return Status::ok();  // updates run early (compiler reorder_updates)
  }
  if (first == fn.ops.size()) return Status::ok();
  std::unordered_set<int32_t> inputs;
  for (size_t i = first; i < fn.ops.size(); ++i) {
    const BoundOp& b = ops_[fn.ops[i]];
    const fb::Op& o = *p.ops()->Get(fn.ops[i]);
    // Host kernels only: a device's or a plugin's update could fail halfway, which only a full
    // snapshot undoes.
    if (!b.backend || owns_memory(*b.backend) || (std::string_view(b.backend->name) != "cpu" && std::string_view(b.backend->name) != "ref")) {
      written->clear();
      return Status::ok();
    }
    for (const pock_attr& a : b.attrs) {
      if (std::string_view(a.name) == "lr" && !(std::fabs(a.f) <= kLargestDeferredLr)) {
        written->clear();
        return Status::ok();
      }
    }
    const std::string_view op = o.op()->string_view();
    const size_t n = o.inputs()->size();
    // SgdUpdate(param, grad, step, momentum?, clip?), AdamUpdate(param, grad, step, m, v, clip?)
    const size_t clip = op == "AdamUpdate" ? 5 : 4;
    for (size_t k = 0; k < n; ++k) {
      const int32_t id = o.inputs()->Get(static_cast<flatbuffers::uoffset_t>(k));
      if (id < 0 || k == 2) continue;
      if (k == 1 || k == clip) {
        inputs.insert(id);
      } else {
        written->insert(id);
      }
    }
  }
  updates_from_ = first;
  update_inputs_.assign(inputs.begin(), inputs.end());
  return Status::ok();
}

Status EngineCore::check_update_inputs() const {
  for (int32_t id : update_inputs_) {
    const pock_tensor_desc& t = tensors_[static_cast<size_t>(id)];
    if (t.dtype != POCK_F32) continue;
    const float* v = static_cast<const float*>(t.data);
    const size_t n = t.nbytes / sizeof(float);
    if (host_floats_bounded(v, n, kLargestGradient)) continue;
    // Failed: find out which way, for the message.
    const bool finite = host_floats_finite(v, n);
    return Status(Code::kNumerical, "gradient '" + view_.program->tensors()->Get(id)->name()->str() + "' is " +
                                        (finite ? "larger than 1e15" : "NaN or Inf") +
                                        ": the step's updates were not applied");
  }
  return Status::ok();
}

Status EngineCore::save_snapshot() {
  for (const SnapshotSpan& span : snapshot_spans_) {
    POCK_RETURN_IF_ERROR(spaces_.within_space(span.space, span.slot, tensors_[span.tensor].data, span.bytes));
  }
  return Status::ok();
}

Status EngineCore::restore_snapshot() {
  for (const SnapshotSpan& span : snapshot_spans_) {
    POCK_RETURN_IF_ERROR(spaces_.within_space(span.space, tensors_[span.tensor].data, span.slot, span.bytes));
  }
  return Status::ok();
}

void EngineCore::plan_finite_check() {
  std::vector<FiniteCheck::Parameter> parameters;
  for (int32_t id : trainable_) {
    const pock_tensor_desc& t = tensors_[static_cast<size_t>(id)];
    parameters.push_back({view_.program->tensors()->Get(id)->name()->c_str(), space_of(id), {t.data, t.nbytes, t.dtype}});
  }
  finite_check_.plan(parameters, spaces_);
}

Status EngineCore::check_trainables_finite() const { return finite_check_.check(spaces_); }

}  // namespace pock
