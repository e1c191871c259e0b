// cpu kernels of the determinant family: Det and DetGrad (f32 in, double inside, as ref: a
// determinant is a product of n pivots, whose rounding float would compound), with Eigen:
// matrices of order up to 4 by its closed forms for fixed sizes (determinant(),
// computeInverseAndDetWithCheck: unrolled, on the stack, several times faster than a factorization
// at such sizes), larger ones by its PartialPivLU. The matrices split over threads, each tile of
// them with its own factorization and buffers, made at prepare, so a step allocates nothing (Eigen
// reuses a decomposition's storage for a matrix of the same order).
//
// DetGrad is the cofactor matrix det(x) inv(x)^T; where x is singular (a pivot, or the closed
// form's determinant, exactly 0) each cofactor is the determinant of its minor, as ref does.
#include <Eigen/LU>

#include <algorithm>
#include <string_view>
#include <vector>

#include "kernels/cpu/cpu_families.hpp"
#include "kernels/cpu/cpu_util.hpp"
#include "kernels/cpu/thread_pool.hpp"
#include "runtime/prepared_kernel.hpp"

namespace pock::cpu {
namespace {

using Matrix = Eigen::MatrixXd;
using RowMajorF32 = Eigen::Map<const Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>;

// What one thread's tile of matrices works in.
struct Scratch {
  Eigen::PartialPivLU<Matrix> lu;
  Matrix inverse;
  Eigen::PartialPivLU<Matrix> minor_lu;  // order n - 1: the cofactors of a singular matrix
  Matrix minor;
  explicit Scratch(Eigen::Index n)
      : lu(n), inverse(n, n), minor_lu(std::max<Eigen::Index>(n - 1, 0)), minor(std::max<Eigen::Index>(n - 1, 0), std::max<Eigen::Index>(n - 1, 0)) {}
};

struct DetPlan {
  int64_t n = 0;
  size_t matrices = 0, tile = 1;
  std::vector<Scratch> scratch;  // one per tile of the thread pool's loop
  pthreadpool_t pool = nullptr;

  Status prepare(const pock_op_desc& op) {
    const pock_tensor_desc& x = op.inputs[std::string_view(op.op) == "DetGrad" ? 1 : 0];
    n = x.dims[x.rank - 1];
    matrices = static_cast<size_t>(dims_product(x, 0, x.rank - 2));
    pool = thread_pool_for(op.num_threads);
    // About 4096 multiply-adds per tile at least: an LU costs n^3 / 3.
    tile = balanced_tile(pool, matrices, static_cast<size_t>(std::max<int64_t>(1, 12288 / std::max<int64_t>(n * n * n, 1))));
    scratch.assign((matrices + tile - 1) / tile, Scratch(static_cast<Eigen::Index>(n)));
    return Status::ok();
  }

  // Calls f(matrix index, its scratch) for every matrix, tiles of them on the thread pool.
  template <typename F>
  void for_each_matrix(F&& f) {
    parallel_for(pool, matrices, tile, [&](size_t begin, size_t end) {
      Scratch& s = scratch[begin / tile];
      for (size_t b = begin; b < end; ++b) f(static_cast<int64_t>(b), s);
    });
  }
};

RowMajorF32 matrix_at(const float* x, int64_t b, int64_t n) { return RowMajorF32(x + b * n * n, n, n); }

template <int N>
Status det(const KernelCall& c, DetPlan& plan) {
  const float* x = c.in_data<float>(0);
  float* y = c.out_data<float>(0);
  plan.for_each_matrix([&](int64_t b, Scratch& s) {
    const RowMajorF32 m = matrix_at(x, b, plan.n);
    if constexpr (N == Eigen::Dynamic) {
      s.lu.compute(m.cast<double>());
      y[b] = static_cast<float>(s.lu.determinant());
    } else {
      y[b] = static_cast<float>(Eigen::Matrix<double, N, N>(m.cast<double>()).determinant());
    }
  });
  return Status::ok();
}

// dx[i][j] = dy times the (i, j) cofactor: (-1)^(i+j) det(x without row i and column j).
void cofactors_from_minors(const RowMajorF32& x, float dy, Scratch& s, float* dx) {
  const int64_t n = x.rows();
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      for (int64_t r = 0, mr = 0; r < n; ++r) {
        if (r == i) continue;
        for (int64_t col = 0, mc = 0; col < n; ++col) {
          if (col != j) s.minor(mr, mc++) = x(r, col);
        }
        ++mr;
      }
      double cofactor = 1.0;  // the minor of a 1x1 matrix is empty
      if (n > 1) {
        s.minor_lu.compute(s.minor);
        cofactor = ((i + j) % 2 == 0 ? 1.0 : -1.0) * s.minor_lu.determinant();
      }
      dx[i * n + j] = static_cast<float>(dy * cofactor);
    }
  }
}

// dx = dy det(x) inv(x)^T.
template <typename Inverse>
void scaled_cofactors(const Inverse& inverse, double scale, int64_t n, float* dx) {
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < n; ++j) dx[i * n + j] = static_cast<float>(scale * inverse(j, i));
  }
}

template <int N>
Status det_grad(const KernelCall& c, DetPlan& plan) {
  const int64_t n = plan.n;
  const float* dy = c.in_data<float>(0);
  const float* x = c.in_data<float>(1);
  float* dx = c.out_data<float>(0);
  plan.for_each_matrix([&](int64_t b, Scratch& s) {
    const RowMajorF32 m = matrix_at(x, b, n);
    float* out = dx + b * n * n;
    if constexpr (N == Eigen::Dynamic) {
      s.lu.compute(m.cast<double>());
      if ((s.lu.matrixLU().diagonal().array() == 0.0).any()) return cofactors_from_minors(m, dy[b], s, out);
      s.inverse.noalias() = s.lu.inverse();
      scaled_cofactors(s.inverse, static_cast<double>(dy[b]) * s.lu.determinant(), n, out);
    } else {
      Eigen::Matrix<double, N, N> inverse;
      double determinant = 0;
      bool invertible = false;
      Eigen::Matrix<double, N, N>(m.cast<double>()).computeInverseAndDetWithCheck(inverse, determinant, invertible, 0.0);
      if (!invertible) return cofactors_from_minors(m, dy[b], s, out);
      scaled_cofactors(inverse, static_cast<double>(dy[b]) * determinant, n, out);
    }
  });
  return Status::ok();
}

// The kernel for the matrices' order.
template <template <int> class Kernel>
Status by_order(const KernelCall& c, DetPlan& plan) {
  switch (plan.n) {
    case 1: return Kernel<1>::run(c, plan);
    case 2: return Kernel<2>::run(c, plan);
    case 3: return Kernel<3>::run(c, plan);
    case 4: return Kernel<4>::run(c, plan);
    default: return Kernel<Eigen::Dynamic>::run(c, plan);
  }
}
template <int N>
struct DetKernel {
  static Status run(const KernelCall& c, DetPlan& plan) { return det<N>(c, plan); }
};
template <int N>
struct DetGradKernel {
  static Status run(const KernelCall& c, DetPlan& plan) { return det_grad<N>(c, plan); }
};

bool accepts(const pock_op_desc& op) {
  const pock_tensor_desc& x = op.inputs[op.num_inputs - 1];
  return x.rank >= 2 && x.dims[x.rank - 1] == x.dims[x.rank - 2] && x.dtype == POCK_F32;
}

}  // namespace

void register_determinant(KernelTable& t) {
  t.add(prepared_kernel<DetPlan, by_order<DetKernel>>("Det", DType::kF32, kCpuScore, accepts));
  t.add(prepared_kernel<DetPlan, by_order<DetGradKernel>>("DetGrad", DType::kF32, kCpuScore, accepts));
}

}  // namespace pock::cpu
