#include "kernels/cuda/instance.hpp"

#include <cstdlib>

#include "kernels/cuda/cublas_api.hpp"
#include "kernels/cuda/device_error.hpp"
#include "kernels/cuda/stream.hpp"

namespace pock::cuda {
namespace {

thread_local Instance* t_current = nullptr;

std::string describe(cudaError_t error) {
  return std::string(cudaGetErrorName(error)) + " (" + cudaGetErrorString(error) + ")";
}

// POCK_CUDA_DEVICE picks among several GPUs; the first one otherwise.
int requested_device() {
  const char* env = std::getenv("POCK_CUDA_DEVICE");
  if (!env || !*env) return 0;
  char* end = nullptr;
  const long v = std::strtol(env, &end, 10);
  return end && *end == '\0' && v >= 0 && v < 1024 ? static_cast<int>(v) : -1;
}

}  // namespace

bool is_device_failure(cudaError_t error) {
  switch (error) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorLaunchTimeout:
    case cudaErrorECCUncorrectable:
    case cudaErrorAssert:
    case cudaErrorDevicesUnavailable:
    case cudaErrorUnknown:
      return true;
    default:
      return false;
  }
}

Instance::~Instance() {
  if (!started_) return;
  cudaSetDevice(device_);
  if (stream_) cudaStreamSynchronize(stream_);
  if (cudnn_) cudnnDestroy(cudnn_);
  if (cublas_) cublas_api(nullptr)->destroy(cublas_);
  if (workspace_) cudaFree(workspace_);
  if (cublas_workspace_) cudaFree(cublas_workspace_);
  if (error_word_host_) cudaFreeHost(error_word_host_);
  if (stream_) cudaStreamDestroy(stream_);
}

Status Instance::start() {
  if (!tried_) {
    tried_ = true;
    start_status_ = start_once();
    started_ = start_status_.is_ok();
  }
  if (started_) cudaSetDevice(device_);  // per thread: the caller's thread may have another current device
  return start_status_;
}

Status Instance::start_once() {
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    cudaGetLastError();
    int driver = 0;
    cudaDriverGetVersion(&driver);
    return Status(Code::kBackend, std::string("cuda: no usable GPU: ") +
                                      (driver == 0 ? "no CUDA driver is installed (" : "the driver reports ") + describe(e) +
                                      (driver == 0 ? ")" : ""));
  }
  if (count == 0) return Status(Code::kBackend, "cuda: no usable GPU: the driver reports no CUDA device");
  device_ = requested_device();
  if (device_ < 0 || device_ >= count) {
    return Status(Code::kBackend, "cuda: POCK_CUDA_DEVICE names no device (this machine has " + std::to_string(count) + ")");
  }
  auto fail = [](const char* what, cudaError_t error) {
    cudaGetLastError();
    return Status(Code::kBackend, std::string("cuda: ") + what + ": " + describe(error));
  };
  if ((e = cudaSetDevice(device_)) != cudaSuccess) return fail("cudaSetDevice", e);
  if ((e = cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking)) != cudaSuccess) return fail("cudaStreamCreate", e);
  if ((e = cudaHostAlloc(reinterpret_cast<void**>(&error_word_host_), 2 * sizeof(int32_t), cudaHostAllocMapped)) != cudaSuccess) {
    return fail("cudaHostAlloc (error word)", e);
  }
  error_word_host_[0] = error_word_host_[1] = 0;
  if ((e = cudaHostGetDevicePointer(reinterpret_cast<void**>(&error_word_device_), error_word_host_, 0)) != cudaSuccess) {
    return fail("cudaHostGetDevicePointer (error word)", e);
  }
  std::string why;
  const CublasApi* blas = cublas_api(&why);
  if (!blas) return Status(Code::kBackend, why);
  const cublasStatus_t b = blas->create(&cublas_);
  if (b != CUBLAS_STATUS_SUCCESS) {
    cublas_ = nullptr;
    return Status(Code::kBackend, "cuda: cublasCreate: " + cublas_status_text(b));
  }
  blas->set_stream(cublas_, stream_);
  // Results must not depend on the run: no atomics-based reductions inside cuBLAS.
  blas->set_atomics_mode(cublas_, CUBLAS_ATOMICS_NOT_ALLOWED);
  if (cublas_workspace_bytes_) {
    if ((e = cudaMalloc(&cublas_workspace_, cublas_workspace_bytes_)) != cudaSuccess) return fail("cudaMalloc (cuBLAS workspace)", e);
    const cublasStatus_t w = blas->set_workspace(cublas_, cublas_workspace_, cublas_workspace_bytes_);
    if (w != CUBLAS_STATUS_SUCCESS) return Status(Code::kBackend, "cuda: cublasSetWorkspace: " + cublas_status_text(w));
  }
  return Status::ok();
}

cudnnHandle_t Instance::cudnn() {
  if (!cudnn_tried_ && started_) {
    cudnn_tried_ = true;
    if (cudnnCreate(&cudnn_) != CUDNN_STATUS_SUCCESS) {
      cudnn_ = nullptr;
    } else {
      cudnnSetStream(cudnn_, stream_);
    }
  }
  return cudnn_;
}

Status Instance::reserve_workspace(size_t bytes) {
  if (bytes <= workspace_bytes_) return Status::ok();
  POCK_RETURN_IF_ERROR(start());
  // Ops prepared earlier may still run on the old buffer (pockc tune prepares between runs).
  POCK_RETURN_IF_ERROR(check(cudaStreamSynchronize(stream_), "cuda workspace: waiting for the stream"));
  void* grown = nullptr;
  POCK_RETURN_IF_ERROR(check(cudaMalloc(&grown, bytes), "cuda workspace: cudaMalloc of " + std::to_string(bytes) + " bytes"));
  if (workspace_) cudaFree(workspace_);
  workspace_ = grown;
  workspace_bytes_ = bytes;
  return Status::ok();
}

int32_t Instance::add_error_site(const std::string& message) {
  sites_.push_back(message);
  return static_cast<int32_t>(sites_.size());
}

int32_t Instance::take_error_site() {
  if (!error_word_host_) return 0;
  const int32_t site = *static_cast<volatile int32_t*>(error_word_host_);
  *static_cast<volatile int32_t*>(error_word_host_) = 0;
  return site > 0 && static_cast<size_t>(site) <= sites_.size() ? site : 0;
}

ScopedInstance::ScopedInstance(Instance* instance) : previous_(t_current) { t_current = instance; }
ScopedInstance::~ScopedInstance() { t_current = previous_; }

Instance* current_instance() { return t_current; }

// ---- stream.hpp and device_error.hpp: the current instance as kernels see it ----------------

cudaStream_t current_stream() { return t_current ? t_current->stream() : nullptr; }
cublasHandle_t current_cublas() { return t_current ? t_current->cublas() : nullptr; }
cudnnHandle_t current_cudnn() { return t_current ? t_current->cudnn() : nullptr; }

Status reserve_workspace(size_t bytes) {
  if (!t_current) return Status(Code::kInternal, "cuda: reserve_workspace outside a backend call");
  return t_current->reserve_workspace(bytes);
}
void* workspace() { return t_current ? t_current->workspace() : nullptr; }
size_t workspace_size() { return t_current ? t_current->workspace_size() : 0; }

int32_t add_error_site(const std::string& message) { return t_current ? t_current->add_error_site(message) : 0; }
int32_t* device_error_word() { return t_current ? t_current->error_word_device() : nullptr; }

Status check(cudaError_t error, const std::string& what) {
  if (error == cudaSuccess) return Status::ok();
  cudaGetLastError();  // clears a non-sticky error so that the next launch starts clean
  return Status(is_device_failure(error) ? Code::kBackend : Code::kInternal, what + ": " + describe(error));
}

Status check(cublasStatus_t status, const std::string& what) {
  if (status == CUBLAS_STATUS_SUCCESS) return Status::ok();
  const Code code = status == CUBLAS_STATUS_EXECUTION_FAILED ? Code::kBackend
                    : status == CUBLAS_STATUS_ALLOC_FAILED  ? Code::kOutOfMemory
                                                            : Code::kInternal;
  return Status(code, what + ": " + cublas_status_text(status));
}

Status check(cudnnStatus_t status, const std::string& what) {
  if (status == CUDNN_STATUS_SUCCESS) return Status::ok();
  const int family = static_cast<int>(status) / 1000;  // cuDNN 9 groups its codes by thousands
  const Code code = family == 5 ? Code::kBackend  // CUDNN_STATUS_EXECUTION_FAILED*
                    : status == CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED ? Code::kOutOfMemory
                                                                                     : Code::kInternal;
  return Status(code, what + ": " + cudnnGetErrorString(status));
}

}  // namespace pock::cuda
