// The runtime engine: a verified blob, one arena, one persistent region, every op bound to a
// kernel at load. A step is a walk over a precomputed list; it allocates nothing.
#pragma once
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "blob/reader.hpp"
#include "pock/backend.h"
#include "pock/pock.h"
#include "runtime/backend_set.hpp"
#include "runtime/finite_check.hpp"
#include "runtime/mapped_file.hpp"
#include "runtime/memory_spaces.hpp"

namespace pock {

struct EngineOptions {
  int num_threads = 0;
  bool rollback_on_failure = true;
  std::string backend;  // preferred backend; empty: as the blob says
  std::vector<std::string> backend_plugins;  // plugin libraries to load (runtime/plugin_loader.hpp)
  uint64_t memory_budget_bytes = 0;  // 0: no budget
};

class EngineCore {
 public:
  static Result<std::unique_ptr<EngineCore>> open_file(const std::string& path, const EngineOptions& options);
  // `data` must outlive the engine.
  static Result<std::unique_ptr<EngineCore>> open_buffer(const void* data, size_t size, const EngineOptions& options);
  ~EngineCore();

  Status tensor_info(std::string_view name, pock_tensor_info* info) const;
  Status set_input(std::string_view name, const void* data, size_t nbytes);
  Status get_output(std::string_view name, void* data, size_t nbytes) const;
  Status get_parameter(std::string_view name, void* data, size_t nbytes) const;
  Status set_parameter(std::string_view name, const void* data, size_t nbytes);
  // Direct access for callers that fill inputs in place (no copy): nullptr if absent.
  void* tensor_data(std::string_view name);

  Status infer();
  // Any inference-form function by name (infer, or one the model adds beside it: decode).
  Status run_function(std::string_view name);
  bool has_function(std::string_view name) const { return find_function(name) >= 0; }
  Status train_step(float* loss);
  Status eval_step(float* loss);
  bool can_train() const { return train_fn_ >= 0; }
  int64_t step() const { return step_ ? *step_ : 0; }

  Status save_checkpoint(const std::string& path) const;
  Status load_checkpoint(const std::string& path);

  // For tools and tests.
  const BlobView& blob() const { return view_; }
  size_t arena_bytes() const;  // host memory
  size_t persistent_bytes() const;
  // Backend bound to each op; a Copy between memory spaces shows as "copy:<device backend>".
  std::vector<std::string> op_backends() const;
  // Every backend this engine knows, loaded or not (failed plugins keep their error).
  const std::vector<BackendEntry>& backend_entries() const { return backends_.entries(); }
  int32_t ops_bound_to(const pock_backend_v1* backend) const;
  // Scratch the bound backends hold for their kernels (those that report it), in bytes.
  size_t workspace_bytes() const;
  std::vector<std::string> parameter_names() const;

  // Per-op timing for profilers (`pockc bench --per-op`). Off by default, and then run() reads no
  // clock. Turning it on sizes the buffer once, here, so a timed step still allocates nothing.
  void set_op_timing(bool enabled);
  // Wall time in nanoseconds of each op's latest execution, by op index (0: not run since enabled).
  const std::vector<int64_t>& op_time_ns() const { return op_time_ns_; }

 private:
  struct BoundOp {
    pock_op_desc desc{};
    std::vector<pock_tensor_desc> inputs, outputs;
    std::vector<pock_attr> attrs;
    pock_backend_v1* backend = nullptr;  // nullptr: a Copy the engine runs through its memory spaces
    void* handle = nullptr;
    uint8_t copy_from = 0, copy_to = 0;  // a Copy's memory spaces
  };
  struct Function {
    std::string name;
    std::vector<uint32_t> ops;
    int32_t loss = -1;
    std::vector<int32_t> inputs;  // the caller's inputs it reads: each must be set before it runs
  };

  EngineCore() = default;
  Status init(const uint8_t* data, size_t size, const EngineOptions& options);
  Status bind_ops();
  Status bind_op(uint32_t index);
  void place_tensor(size_t index);  // data pointer and memory space of a tensor, from spaces_
  bool op_touches_space(uint32_t index, uint8_t space) const;
  // After a failed run: a device that failed (POCK_ERR_BACKEND) is dropped, its memory moves to
  // the host and its ops re-bind to host backends. Returns `cause`, extended with what was done.
  Status drop_failed_device(const Status& cause);
  Status run(const Function& fn);
  Status check_inputs_set(const Function& fn) const;
  Status check_memory_budget() const;
  int32_t find_tensor(std::string_view name) const;
  int find_function(std::string_view name) const;
  Status check_trainables_finite() const;
  void plan_finite_check();  // at open, and when a dropped device's parameters move to the host
  Status bind_copy(BoundOp& b);
  Status run_copy(const BoundOp& b) const;
  uint8_t space_of(int32_t id) const;
  // A tensor's bytes to or from host memory, wherever it lives (checkpoints, parameters, I/O).
  Status read_tensor(int32_t id, void* dst) const;
  Status write_tensor(int32_t id, const void* src);
  Status save_snapshot();
  Status restore_snapshot();
  uint32_t program_fingerprint() const;

  EngineOptions options_;
  MappedFile file_;
  BlobView view_;
  BackendSet backends_;   // before spaces_: device regions go back to their backends first
  MemorySpaces spaces_;
  AlignedBuffer snapshot_;  // the host part of the rollback snapshot
  Status plan_snapshot();
  std::vector<pock_tensor_desc> tensors_;
  std::vector<BoundOp> ops_;
  std::vector<Function> functions_;
  // Transparent hash: tensor_id(string_view) looks names up without building a std::string, so
  // set_input/read_output by name never allocate inside an app's training loop.
  struct NameHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_map<std::string, int32_t, NameHash, std::equal_to<>> by_name_;
  std::vector<int32_t> checkpointed_;  // persistent tensors saved in checkpoints
  // What a training step may change, saved before it runs: each checkpointed tensor's leading
  // bytes — all of it, except a partial-channel weight, whose frozen rows no step writes.
  struct SnapshotSpan {
    int32_t tensor;
    size_t bytes;
    uint8_t space;
    uint8_t* slot;  // where the bytes are kept: host snapshot, or a buffer in the tensor's device space
  };
  std::vector<SnapshotSpan> snapshot_spans_;
  // Deferred updates: where the train function's optimizer updates are its last ops, all on host
  // backends, a step runs the ops before them, checks the loss and every gradient, and only then
  // updates — so the snapshot need not hold the weights and optimizer state (those only updates
  // write), and a failed step still changes nothing. updates_from_ is the first update's position
  // in the train function (SIZE_MAX: not so; the snapshot holds everything).
  size_t updates_from_ = SIZE_MAX;
  std::vector<int32_t> update_inputs_;  // gradients and clip scales the updates read
  Status plan_deferred_updates(std::unordered_set<int32_t>* written);
  Status check_update_inputs() const;
  Status run_ops(const Function& fn, size_t begin, size_t end);
  std::vector<int32_t> trainable_;
  FiniteCheck finite_check_;  // which parameters each memory space checks after a step
  int infer_fn_ = -1, train_fn_ = -1, eval_fn_ = -1;
  int64_t* step_ = nullptr;
  std::vector<uint8_t> input_set_;  // by tensor id: set_input (or tensor_data) was called once
  bool op_timing_ = false;
  std::vector<int64_t> op_time_ns_;
};

}  // namespace pock
