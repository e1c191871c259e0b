// One cuda backend instance (one per engine or compilation): its device, stream, cuBLAS and cuDNN
// handles, workspace and the device-side error word. Nothing here touches the GPU until start()
// — the compiler only asks supports_op, which must answer on a machine without one — and the
// first alloc or prepare starts it, failing with the reason when there is no driver or device.
// ScopedInstance makes an instance the calling thread's current one, which is how kernels'
// run() (a plain KernelFn) reach it through stream.hpp and device_error.hpp.
#pragma once
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include <cstdint>
#include <string>
#include <vector>

#include "pock/status.hpp"
#include "runtime/kernel_scope.hpp"

namespace pock::cuda {

class Instance {
 public:
  Instance() = default;
  Instance(const Instance&) = delete;
  Instance& operator=(const Instance&) = delete;
  ~Instance();

  // Picks the device, creates the stream and cuBLAS handle; once. Later calls return the first
  // outcome, so a machine without a GPU gives the same clear message every time.
  Status start();
  bool started() const { return started_; }
  // Before start: give cuBLAS a workspace of its own, as stream capture (CUDA graphs) needs.
  void want_cublas_workspace(size_t bytes) { cublas_workspace_bytes_ = bytes; }
  int device() const { return device_; }

  cudaStream_t stream() const { return stream_; }
  cublasHandle_t cublas() const { return cublas_; }
  cudnnHandle_t cudnn();  // created on first use, bound to stream(); nullptr when that failed

  // Grows the workspace (prepare time only: waits for the stream before moving it).
  Status reserve_workspace(size_t bytes);
  void* workspace() const { return workspace_; }
  size_t workspace_size() const { return workspace_bytes_; }

  // Device-side failures of ops that cannot return them synchronously (a label out of range):
  // a kernel writes the id of its site into error_word(); synchronize reports the site's message.
  int32_t add_error_site(const std::string& message);
  int32_t* error_word_device() const { return error_word_device_; }
  // The site recorded since the last call (0: none), cleared. Call after the stream is idle.
  int32_t take_error_site();
  const std::string& error_site_message(int32_t site) const { return sites_[static_cast<size_t>(site - 1)]; }
  // A second mapped word, for the all_finite extensions' answer: 0, or 1 + the index of a buffer
  // found holding NaN or Inf.
  volatile int32_t* flag_host() const { return error_word_host_ + 1; }
  int32_t* flag_device() const { return error_word_device_ + 1; }

  KernelScope& scope() { return scope_; }
  std::string last_error;

 private:
  Status start_once();

  bool tried_ = false, started_ = false;
  Status start_status_;
  int device_ = 0;
  cudaStream_t stream_ = nullptr;
  cublasHandle_t cublas_ = nullptr;
  cudnnHandle_t cudnn_ = nullptr;
  bool cudnn_tried_ = false;
  void* workspace_ = nullptr;
  size_t workspace_bytes_ = 0;
  void* cublas_workspace_ = nullptr;
  size_t cublas_workspace_bytes_ = 0;
  int32_t* error_word_host_ = nullptr;    // two mapped pinned words (error site, flag): read after a sync
  int32_t* error_word_device_ = nullptr;  // the same word as kernels address it
  std::vector<std::string> sites_;
  KernelScope scope_;
};

// The calling thread's current instance, for the duration of a prepare or execute.
class ScopedInstance {
 public:
  explicit ScopedInstance(Instance* instance);
  ~ScopedInstance();
  ScopedInstance(const ScopedInstance&) = delete;
  ScopedInstance& operator=(const ScopedInstance&) = delete;

 private:
  Instance* previous_;
};

Instance* current_instance();  // nullptr outside a ScopedInstance

// Whether a CUDA error leaves the context unusable (a fault inside a kernel): such errors are
// device failures (POCK_ERR_BACKEND, the runtime drops the device), any other a failure of the op.
bool is_device_failure(cudaError_t error);

}  // namespace pock::cuda
