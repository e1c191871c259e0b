#include "kernels/cuda/conv_plan.hpp"

#include <string>

#include "kernels/cuda/stream.hpp"

namespace pock::cuda {
namespace {

// An algorithm that wants more scratch than this is passed over when the heuristic offers
// another: Jetson boards share their memory with the CPU.
constexpr size_t kWorkspaceCap = size_t{256} << 20;

// The first usable result of a heuristic ranking: deterministic, within the cap, no tensor-core
// math (TF32 would round the operands to 10 bits); failing that, any usable one without tensor
// cores. Returns false when none is.
template <typename Perf>
bool pick(const Perf* perf, int count, int* algorithm, size_t* bytes) {
  for (int pass = 0; pass < 2; ++pass) {
    for (int i = 0; i < count; ++i) {
      const Perf& r = perf[i];
      const bool tensor_cores = r.mathType == CUDNN_TENSOR_OP_MATH || r.mathType == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION;
      if (r.status != CUDNN_STATUS_SUCCESS || tensor_cores) continue;
      if (pass == 0 && (r.determinism != CUDNN_DETERMINISTIC || r.memory > kWorkspaceCap)) continue;
      *algorithm = static_cast<int>(r.algo);
      *bytes = r.memory;
      return true;
    }
  }
  return false;
}

}  // namespace

Status ConvPlan::create(ConvDirection direction, const ConvShapes& s, const params::WindowParams& p,
                        std::unique_ptr<ConvPlan>* out) {
  std::unique_ptr<ConvPlan> plan(new ConvPlan);
  POCK_RETURN_IF_ERROR(plan->describe(s, p));
  POCK_RETURN_IF_ERROR(plan->choose(direction));
  *out = std::move(plan);
  return Status::ok();
}

ConvPlan::~ConvPlan() {
  if (x_) cudnnDestroyTensorDescriptor(x_);
  if (y_) cudnnDestroyTensorDescriptor(y_);
  if (w_) cudnnDestroyFilterDescriptor(w_);
  if (conv_) cudnnDestroyConvolutionDescriptor(conv_);
}

Status ConvPlan::describe(const ConvShapes& s, const params::WindowParams& p) {
  auto i = [](int64_t v) { return static_cast<int>(v); };
  POCK_RETURN_IF_ERROR(check(cudnnCreateTensorDescriptor(&x_), "cudnnCreateTensorDescriptor"));
  POCK_RETURN_IF_ERROR(check(cudnnCreateTensorDescriptor(&y_), "cudnnCreateTensorDescriptor"));
  POCK_RETURN_IF_ERROR(check(cudnnCreateFilterDescriptor(&w_), "cudnnCreateFilterDescriptor"));
  POCK_RETURN_IF_ERROR(check(cudnnCreateConvolutionDescriptor(&conv_), "cudnnCreateConvolutionDescriptor"));
  POCK_RETURN_IF_ERROR(check(cudnnSetTensor4dDescriptor(x_, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, i(s.n), i(s.c),
                                                        i(s.h), i(s.w)),
                             "conv input descriptor"));
  POCK_RETURN_IF_ERROR(check(cudnnSetTensor4dDescriptor(y_, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, i(s.n), i(s.o),
                                                        i(s.oh), i(s.ow)),
                             "conv output descriptor"));
  POCK_RETURN_IF_ERROR(check(cudnnSetFilter4dDescriptor(w_, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, i(s.o),
                                                        i(s.c / p.groups), i(s.kh), i(s.kw)),
                             "conv filter descriptor"));
  POCK_RETURN_IF_ERROR(check(cudnnSetConvolution2dDescriptor(conv_, i(p.pad_top), i(p.pad_left), i(p.stride_h),
                                                             i(p.stride_w), i(p.dilation_h), i(p.dilation_w),
                                                             CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT),
                             "conv descriptor"));
  POCK_RETURN_IF_ERROR(check(cudnnSetConvolutionGroupCount(conv_, i(p.groups)), "conv groups"));
  return check(cudnnSetConvolutionMathType(conv_, CUDNN_FMA_MATH), "conv math type");
}

Status ConvPlan::choose(ConvDirection direction) {
  cudnnHandle_t handle = current_cudnn();
  int count = 0;
  bool found = false;
  switch (direction) {
    case ConvDirection::kForward: {
      cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
      POCK_RETURN_IF_ERROR(check(cudnnGetConvolutionForwardAlgorithm_v7(handle, x_, w_, conv_, y_,
                                                                        CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &count, perf),
                                 "cudnnGetConvolutionForwardAlgorithm_v7"));
      found = pick(perf, count, &algorithm_, &workspace_bytes_);
      break;
    }
    case ConvDirection::kBackwardData: {
      cudnnConvolutionBwdDataAlgoPerf_t perf[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
      POCK_RETURN_IF_ERROR(check(cudnnGetConvolutionBackwardDataAlgorithm_v7(
                                     handle, w_, y_, conv_, x_, CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, &count, perf),
                                 "cudnnGetConvolutionBackwardDataAlgorithm_v7"));
      found = pick(perf, count, &algorithm_, &workspace_bytes_);
      break;
    }
    case ConvDirection::kBackwardFilter: {
      cudnnConvolutionBwdFilterAlgoPerf_t perf[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
      POCK_RETURN_IF_ERROR(check(cudnnGetConvolutionBackwardFilterAlgorithm_v7(
                                     handle, x_, y_, conv_, w_, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT, &count, perf),
                                 "cudnnGetConvolutionBackwardFilterAlgorithm_v7"));
      found = pick(perf, count, &algorithm_, &workspace_bytes_);
      break;
    }
  }
  if (!found) return Status(Code::kBackend, "cuDNN offers no f32 algorithm for this convolution");
  return Status::ok();
}

Status ConvPlan::forward(const float* x, const float* w, float* y, void* scratch) const {
  const float one = 1.0f, zero = 0.0f;
  return check(cudnnConvolutionForward(current_cudnn(), &one, x_, x, w_, w, conv_,
                                       static_cast<cudnnConvolutionFwdAlgo_t>(algorithm_), scratch, workspace_bytes_,
                                       &zero, y_, y),
               "cudnnConvolutionForward");
}

Status ConvPlan::backward_data(const float* dy, const float* w, float* dx, void* scratch) const {
  const float one = 1.0f, zero = 0.0f;
  return check(cudnnConvolutionBackwardData(current_cudnn(), &one, w_, w, y_, dy, conv_,
                                            static_cast<cudnnConvolutionBwdDataAlgo_t>(algorithm_), scratch,
                                            workspace_bytes_, &zero, x_, dx),
               "cudnnConvolutionBackwardData");
}

Status ConvPlan::backward_filter(const float* x, const float* dy, float* dw, void* scratch) const {
  const float one = 1.0f, zero = 0.0f;
  return check(cudnnConvolutionBackwardFilter(current_cudnn(), &one, x_, x, y_, dy, conv_,
                                              static_cast<cudnnConvolutionBwdFilterAlgo_t>(algorithm_), scratch,
                                              workspace_bytes_, &zero, w_, dw),
               "cudnnConvolutionBackwardFilter");
}

}  // namespace pock::cuda
