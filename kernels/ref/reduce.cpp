// Reference kernels of the reduce family (double accumulation): ReduceSum, ReduceMean, ReduceMax,
// ReduceMin, ReduceProd, ReduceSumSquare, ReduceL1, ReduceL2, ReduceLogSum, ReduceLogSumExp.
#include <algorithm>
#include <cmath>
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

// Each reduction folds its group in double: a start value, a step per element and a finish that
// also sees the group's size. The oracle favours clarity: one generic walk, one fold per op.
struct SumFold {
  static double start() { return 0.0; }
  static double step(double acc, double v) { return acc + v; }
  static double finish(double acc, double) { return acc; }
};
struct MeanFold : SumFold {
  static double finish(double acc, double count) { return acc / count; }
};
struct SumSquareFold : SumFold {
  static double step(double acc, double v) { return acc + v * v; }
};
struct L1Fold : SumFold {
  static double step(double acc, double v) { return acc + std::fabs(v); }
};
struct L2Fold : SumSquareFold {
  static double finish(double acc, double) { return std::sqrt(acc); }
};
struct LogSumFold : SumFold {
  static double finish(double acc, double) { return std::log(acc); }
};
struct ProdFold {
  static double start() { return 1.0; }
  static double step(double acc, double v) { return acc * v; }
  static double finish(double acc, double) { return acc; }
};
// NaN propagates through max and min, as in PyTorch and numpy.
template <bool kMax>
struct ExtremumFold {
  static double start() { return (kMax ? -1 : 1) * std::numeric_limits<double>::infinity(); }
  static double step(double acc, double v) {
    if (acc != acc || v != v) return std::numeric_limits<double>::quiet_NaN();
    return kMax ? std::max(acc, v) : std::min(acc, v);
  }
  static double finish(double acc, double) { return acc; }
};

template <typename Fold, typename T = float>
Status reduce_fold(const KernelCall& c, const params::ReduceParams& p) {
  DimWalk kept, reduced;
  POCK_RETURN_IF_ERROR(split_dims(c, p, &kept, &reduced));
  const T* x = c.in_data<T>(0);
  T* y = c.out_data<T>(0);
  const double count = static_cast<double>(reduced.count());
  int64_t o = 0;
  kept.for_each(0, [&](int64_t base) {
    double acc = Fold::start();
    reduced.for_each(base, [&](int64_t i) { acc = Fold::step(acc, x[i]); });
    y[o++] = static_cast<T>(Fold::finish(acc, count));
  });
  return Status::ok();
}

// log(sum(exp(x))) = m + log(sum(exp(x - m))) with m the group's maximum, so that no exp
// overflows; a group of -inf (or an empty one) is -inf, one holding +inf is +inf.
template <typename T = float>
Status reduce_log_sum_exp(const KernelCall& c, const params::ReduceParams& p) {
  DimWalk kept, reduced;
  POCK_RETURN_IF_ERROR(split_dims(c, p, &kept, &reduced));
  const T* x = c.in_data<T>(0);
  T* y = c.out_data<T>(0);
  int64_t o = 0;
  kept.for_each(0, [&](int64_t base) {
    double m = ExtremumFold<true>::start();
    reduced.for_each(base, [&](int64_t i) { m = ExtremumFold<true>::step(m, x[i]); });
    if (std::isinf(m) || m != m) {
      y[o++] = static_cast<T>(m);
      return;
    }
    double sum = 0.0;
    reduced.for_each(base, [&](int64_t i) { sum += std::exp(static_cast<double>(x[i]) - m); });
    y[o++] = static_cast<T>(m + std::log(sum));
  });
  return Status::ok();
}

// Each output element scans the n values of its line (ref::extremum_index: NaN is the extremum).
template <bool kMax>
Status arg_extremum(const KernelCall& c, const params::ArgExtremumParams& p) {
  const ref::AxisLines l = ref::lines_along(c.in(0), p.axis);
  const float* x = c.in_data<float>(0);
  int64_t* y = c.out_data<int64_t>(0);
  for (int64_t o = 0; o < l.outer; ++o) {
    for (int64_t i = 0; i < l.inner; ++i) {
      y[o * l.inner + i] = ref::extremum_index<kMax>(x + o * l.n * l.inner + i, l.n, l.inner, p.select_last_index);
    }
  }
  return Status::ok();
}

// The reductions of one element type (f32 and f64; the folds run in double for both).
template <typename T>
void add_reductions(KernelTable& t, DType dt) {
  t.add(typed_kernel<params::ReduceParams, reduce_fold<SumFold, T>>("ReduceSum", dt));
  t.add(typed_kernel<params::ReduceParams, reduce_fold<MeanFold, T>>("ReduceMean", dt));
  t.add(typed_kernel<params::ReduceParams, reduce_fold<ExtremumFold<true>, T>>("ReduceMax", dt));
  t.add(typed_kernel<params::ReduceParams, reduce_fold<ExtremumFold<false>, T>>("ReduceMin", dt));
  t.add(typed_kernel<params::ReduceParams, reduce_fold<ProdFold, T>>("ReduceProd", dt));
  t.add(typed_kernel<params::ReduceParams, reduce_fold<SumSquareFold, T>>("ReduceSumSquare", dt));
  t.add(typed_kernel<params::ReduceParams, reduce_fold<L1Fold, T>>("ReduceL1", dt));
  t.add(typed_kernel<params::ReduceParams, reduce_fold<L2Fold, T>>("ReduceL2", dt));
  t.add(typed_kernel<params::ReduceParams, reduce_fold<LogSumFold, T>>("ReduceLogSum", dt));
  t.add(typed_kernel<params::ReduceParams, reduce_log_sum_exp<T>>("ReduceLogSumExp", dt));
}

}  // namespace

void register_ref_reduce(KernelTable& t) {
  add_reductions<float>(t, DType::kF32);
  add_reductions<double>(t, DType::kF64);
  t.add(typed_kernel<params::ArgExtremumParams, arg_extremum<true>>("ArgMax", DType::kF32));
  t.add(typed_kernel<params::ArgExtremumParams, arg_extremum<false>>("ArgMin", DType::kF32));
}

}  // namespace pock
