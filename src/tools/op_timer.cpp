#include "tools/op_timer.hpp"

#include <chrono>
#include <ctime>
#include <cstring>
#include <map>
#include <memory>

#include "compiler/spec_op_desc.hpp"
#include "runtime/mapped_file.hpp"
#include "tools/synthetic_data.hpp"
#include "tools/timing_stats.hpp"

namespace pock::tools {
namespace {

using Clock = std::chrono::steady_clock;

// Microseconds of CPU time this process has used.
double process_cpu_us() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e6 + static_cast<double>(t.tv_nsec) / 1e3;
}

// One buffer per distinct tensor of the op, so an op that reads a tensor twice sees one buffer.
class OpBuffers {
 public:
  Status allocate(const ProgramSpec& spec, const OpSpec& op) {
    for (int32_t id : op.inputs) POCK_RETURN_IF_ERROR(add(spec, id, true));
    for (int32_t id : op.outputs) POCK_RETURN_IF_ERROR(add(spec, id, false));
    return Status::ok();
  }
  void* data(int32_t id) const {
    auto it = buffers_.find(id);
    return it == buffers_.end() ? nullptr : it->second->data();
  }

 private:
  Status add(const ProgramSpec& spec, int32_t id, bool is_input) {
    if (id < 0 || buffers_.count(id)) return Status::ok();
    const TensorSpec& t = spec.tensors[static_cast<size_t>(id)];
    auto buffer = std::make_unique<AlignedBuffer>();
    POCK_RETURN_IF_ERROR(buffer->allocate(t.nbytes, t.name.c_str()));
    if (is_input) fill_input(spec, id, buffer->data());
    buffers_[id] = std::move(buffer);
    return Status::ok();
  }
  // Real values where the blob has them (weights, initial state), so that kernels which repack
  // constant weights or read running statistics see what the engine would give them.
  static void fill_input(const ProgramSpec& spec, int32_t id, uint8_t* data) {
    const TensorSpec& t = spec.tensors[static_cast<size_t>(id)];
    const bool in_blob = t.storage == Storage::kWeights || t.has_init;
    const uint64_t offset = t.storage == Storage::kWeights ? t.offset : t.init_offset;
    if (id == spec.step_tensor) {
      // The engine advances the counter before a step runs, so kernels never see its initial 0;
      // optimizers with gradient accumulation act only on some steps, and step 1 acts for k = 1.
      const int64_t first_step = 1;
      std::memcpy(data, &first_step, sizeof first_step);
    } else if (in_blob && offset + t.nbytes <= spec.weights.size()) {
      std::memcpy(data, spec.weights.data() + offset, t.nbytes);
    } else {
      fill_synthetic(t.dtype, data, t.nbytes, 0x5EED0000u + static_cast<uint64_t>(id));
    }
  }
  std::map<int32_t, std::unique_ptr<AlignedBuffer>> buffers_;
};

KernelTime time_on(pock_backend_v1& backend, const pock_op_desc& desc, const OpTimerOptions& options) {
  KernelTime result;
  result.backend = backend.name;
  void* handle = nullptr;
  if (backend.prepare_op(backend.context, &desc, &handle) != POCK_OK) {
    result.error = std::string("prepare: ") + backend.last_error(backend.context);
    return result;
  }
  std::vector<double> samples;
  const Clock::time_point budget_end =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double, std::milli>(options.budget_ms));
  for (int run = 0; run <= options.repeats; ++run) {  // run 0 warms caches and lazy setup up
    const Clock::time_point start = Clock::now();
    const double cpu_start = options.cpu_time ? process_cpu_us() : 0.0;
    if (backend.execute_op(backend.context, handle, &desc) != POCK_OK) {
      result.error = std::string("execute: ") + backend.last_error(backend.context);
      break;
    }
    const double cpu_us = options.cpu_time ? process_cpu_us() - cpu_start : 0.0;
    const Clock::time_point end = Clock::now();
    const double wall_us = std::chrono::duration<double, std::micro>(end - start).count();
    if (run > 0) samples.push_back(options.cpu_time ? cpu_us : wall_us);
    if (run > 0 && end > budget_end) break;
  }
  if (backend.release_op) backend.release_op(backend.context, handle);
  result.ok = result.error.empty() && !samples.empty();
  result.runs = static_cast<int>(samples.size());
  result.median_us = median(samples);
  return result;
}

}  // namespace

Result<std::vector<KernelTime>> time_op_on_backends(const ProgramSpec& spec, const OpSpec& op,
                                                    const std::vector<pock_backend_v1*>& backends,
                                                    const OpTimerOptions& options) {
  POCK_ASSIGN_OR_RETURN(SpecOpDesc d, SpecOpDesc::describe(spec, op, options.threads));
  OpBuffers buffers;
  POCK_RETURN_IF_ERROR(buffers.allocate(spec, op));
  for (size_t i = 0; i < d.num_inputs(); ++i) d.input(i).data = buffers.data(op.inputs[i]);
  for (size_t i = 0; i < d.num_outputs(); ++i) d.output(i).data = buffers.data(op.outputs[i]);
  std::vector<KernelTime> out;
  for (pock_backend_v1* b : backends) {
    if (b->supports_op(b->context, &d.desc()) <= 0) continue;
    out.push_back(time_on(*b, d.desc(), options));
  }
  return out;
}

}  // namespace pock::tools
