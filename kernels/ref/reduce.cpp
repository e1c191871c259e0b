// Reference kernels of the reduce family: ReduceSum, ReduceMean (double accumulation), ReduceMax.
#include <limits>
#include <string>

#include "kernels/params/reduce.hpp"
#include "kernels/ref/ref_util.hpp"

namespace pock {
namespace {

// A set of input dims walked as one odometer: sizes and the input's element strides for them.
struct DimWalk {
  int rank = 0;
  int64_t dims[kMaxRank] = {};
  int64_t strides[kMaxRank] = {};
  int64_t count() const {
    int64_t n = 1;
    for (int d = 0; d < rank; ++d) n *= dims[d];
    return n;
  }
  // Calls f(offset) for every index of these dims, last dim fastest.
  template <typename F>
  void for_each(int64_t base, F&& f) const {
    int64_t idx[kMaxRank] = {};
    int64_t off = base;
    for (int64_t i = 0, n = count(); i < n; ++i) {
      f(off);
      for (int d = rank - 1; d >= 0; --d) {
        ++idx[d];
        off += strides[d];
        if (idx[d] < dims[d]) break;
        off -= strides[d] * idx[d];
        idx[d] = 0;
      }
    }
  }
};

// Splits the input's dims into kept ones (one output element per index, in output order: keepdims
// does not change the layout) and reduced ones (walked for each output element).
Status split_dims(const KernelCall& c, const params::ReduceParams& p, DimWalk* kept, DimWalk* reduced) {
  const pock_tensor_desc& x = c.in(0);
  const bool* is_reduced = p.reduced;
  int64_t stride = 1;
  int64_t strides[kMaxRank] = {};
  for (int d = x.rank - 1; d >= 0; --d) {
    strides[d] = stride;
    stride *= x.dims[d];
  }
  for (int d = 0; d < x.rank; ++d) {
    DimWalk* w = is_reduced[d] ? reduced : kept;
    w->dims[w->rank] = x.dims[d];
    w->strides[w->rank] = strides[d];
    ++w->rank;
  }
  return Status::ok();
}

template <bool kMean>
Status reduce_sum(const KernelCall& c, const params::ReduceParams& p) {
  DimWalk kept, reduced;
  POCK_RETURN_IF_ERROR(split_dims(c, p, &kept, &reduced));
  const float* x = c.in_data<float>(0);
  float* y = c.out_data<float>(0);
  const double count = static_cast<double>(reduced.count());
  int64_t o = 0;
  kept.for_each(0, [&](int64_t base) {
    double acc = 0.0;
    reduced.for_each(base, [&](int64_t i) { acc += x[i]; });
    y[o++] = static_cast<float>(kMean ? acc / count : acc);
  });
  return Status::ok();
}

Status reduce_max(const KernelCall& c, const params::ReduceParams& p) {
  DimWalk kept, reduced;
  POCK_RETURN_IF_ERROR(split_dims(c, p, &kept, &reduced));
  const float* x = c.in_data<float>(0);
  float* y = c.out_data<float>(0);
  int64_t o = 0;
  kept.for_each(0, [&](int64_t base) {
    float best = -std::numeric_limits<float>::infinity();
    bool saw_nan = false;  // NaN propagates, as in PyTorch
    reduced.for_each(base, [&](int64_t i) {
      if (x[i] != x[i]) saw_nan = true;
      if (x[i] > best) best = x[i];
    });
    y[o++] = saw_nan ? std::numeric_limits<float>::quiet_NaN() : best;
  });
  return Status::ok();
}

}  // namespace

void register_ref_reduce(KernelTable& t) {
  t.add(typed_kernel<params::ReduceParams, reduce_sum<false>>("ReduceSum", DType::kF32));
  t.add(typed_kernel<params::ReduceParams, reduce_sum<true>>("ReduceMean", DType::kF32));
  t.add(typed_kernel<params::ReduceParams, reduce_max>("ReduceMax", DType::kF32));
}

}  // namespace pock
