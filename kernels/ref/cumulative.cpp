// Reference kernels of the cumulative family: CumSum on f32, f64, i32, i64, u32 and u64, one
// template for all. Float sums run in double; integer sums wrap (in the unsigned type of their
// width, so that signed overflow is not undefined), as numpy's cumsum does.
#include <type_traits>

#include "kernels/axis_view.hpp"
#include "kernels/params/cumulative.hpp"
#include "kernels/ref/ref_util.hpp"

namespace pock {
namespace {

template <typename T>
struct AccumulatorOf {
  using type = std::make_unsigned_t<T>;
};
template <>
struct AccumulatorOf<float> {
  using type = double;
};
template <>
struct AccumulatorOf<double> {
  using type = double;
};
template <typename T>
using Accumulator = typename AccumulatorOf<T>::type;

template <typename T>
Status cumsum(const KernelCall& c, const params::CumulativeParams& p) {
  const AxisView b = view_around(c.in(0), p.axis);
  const T* x = c.in_data<T>(0);
  T* y = c.out_data<T>(0);
  for (int64_t o = 0; o < b.outer; ++o) {
    for (int64_t i = 0; i < b.inner; ++i) {
      const int64_t base = o * b.len * b.inner + i;
      Accumulator<T> sum = 0;
      for (int64_t step = 0; step < b.len; ++step) {
        const int64_t at = base + (p.reverse ? b.len - 1 - step : step) * b.inner;
        if (p.exclusive) y[at] = static_cast<T>(sum);
        sum += static_cast<Accumulator<T>>(x[at]);
        if (!p.exclusive) y[at] = static_cast<T>(sum);
      }
    }
  }
  return Status::ok();
}

template <typename T>
void add_cumsum(KernelTable& t, DType dt) {
  t.add(typed_kernel<params::CumulativeParams, cumsum<T>>("CumSum", dt));
}

}  // namespace

void register_ref_cumulative(KernelTable& t) {
  add_cumsum<float>(t, DType::kF32);
  add_cumsum<double>(t, DType::kF64);
  add_cumsum<int32_t>(t, DType::kI32);
  add_cumsum<int64_t>(t, DType::kI64);
  add_cumsum<uint32_t>(t, DType::kU32);
  add_cumsum<uint64_t>(t, DType::kU64);
}

}  // namespace pock
