// Reference kernels of the determinant family, in double: LU factorization with partial pivoting
// gives the determinant (the product of the pivots, negated per row swap). The gradient is the
// cofactor matrix, det * inv(x)^T when the factorization has no zero pivot; for a singular matrix,
// where that formula is 0 * infinity, each cofactor is the determinant of its minor.
#include <cmath>
#include <utility>
#include <vector>

#include "kernels/ref/ref_util.hpp"

namespace pock {
namespace {

struct Lu {
  std::vector<double> a;    // L below the diagonal (unit diagonal implied), U on and above it
  std::vector<int64_t> perm;  // row i of the factors is row perm[i] of the matrix
  double det = 1;
  bool singular = false;
};

Lu factor(const std::vector<double>& m, int64_t n) {
  Lu lu{m, std::vector<int64_t>(static_cast<size_t>(n)), 1.0, false};
  auto at = [&](int64_t i, int64_t j) -> double& { return lu.a[static_cast<size_t>(i * n + j)]; };
  for (int64_t i = 0; i < n; ++i) lu.perm[static_cast<size_t>(i)] = i;
  for (int64_t k = 0; k < n; ++k) {
    int64_t pivot = k;
    for (int64_t i = k + 1; i < n; ++i) {
      if (std::fabs(at(i, k)) > std::fabs(at(pivot, k))) pivot = i;
    }
    if (at(pivot, k) == 0.0) {
      lu.singular = true;
      lu.det = 0;
      return lu;
    }
    if (pivot != k) {
      for (int64_t j = 0; j < n; ++j) std::swap(at(k, j), at(pivot, j));
      std::swap(lu.perm[static_cast<size_t>(k)], lu.perm[static_cast<size_t>(pivot)]);
      lu.det = -lu.det;
    }
    lu.det *= at(k, k);
    for (int64_t i = k + 1; i < n; ++i) {
      at(i, k) /= at(k, k);
      for (int64_t j = k + 1; j < n; ++j) at(i, j) -= at(i, k) * at(k, j);
    }
  }
  return lu;
}

std::vector<double> matrix(const float* x, int64_t n) { return std::vector<double>(x, x + n * n); }

Status det(const KernelCall& c) {
  const pock_tensor_desc& x = c.in(0);
  const int64_t n = x.dims[x.rank - 1];
  float* y = c.out_data<float>(0);
  for (int64_t b = 0, count = numel(c.out(0)); b < count; ++b) {
    y[b] = static_cast<float>(factor(matrix(c.in_data<float>(0) + b * n * n, n), n).det);
  }
  return Status::ok();
}

// cof[i][j] = det(x) * inv(x)[j][i]: column j of inv(x) solves x v = e_j through the factors.
void cofactors_from_lu(const Lu& lu, int64_t n, double* cof) {
  std::vector<double> v(static_cast<size_t>(n));
  auto a = [&](int64_t i, int64_t j) { return lu.a[static_cast<size_t>(i * n + j)]; };
  for (int64_t j = 0; j < n; ++j) {
    for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = lu.perm[static_cast<size_t>(i)] == j ? 1.0 : 0.0;
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t k = 0; k < i; ++k) v[static_cast<size_t>(i)] -= a(i, k) * v[static_cast<size_t>(k)];
    }
    for (int64_t i = n - 1; i >= 0; --i) {
      for (int64_t k = i + 1; k < n; ++k) v[static_cast<size_t>(i)] -= a(i, k) * v[static_cast<size_t>(k)];
      v[static_cast<size_t>(i)] /= a(i, i);
    }
    for (int64_t i = 0; i < n; ++i) cof[j * n + i] = lu.det * v[static_cast<size_t>(i)];  // transposed
  }
}

void cofactors_from_minors(const std::vector<double>& m, int64_t n, double* cof) {
  std::vector<double> minor(static_cast<size_t>((n - 1) * (n - 1)));
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      size_t k = 0;
      for (int64_t r = 0; r < n; ++r) {
        for (int64_t s = 0; s < n; ++s) {
          if (r != i && s != j) minor[k++] = m[static_cast<size_t>(r * n + s)];
        }
      }
      const double sign = (i + j) % 2 == 0 ? 1.0 : -1.0;
      cof[i * n + j] = n == 1 ? 1.0 : sign * factor(minor, n - 1).det;
    }
  }
}

Status det_grad(const KernelCall& c) {
  const pock_tensor_desc& x = c.in(1);
  const int64_t n = x.dims[x.rank - 1];
  const float* dy = c.in_data<float>(0);
  float* dx = c.out_data<float>(0);
  std::vector<double> cof(static_cast<size_t>(n * n));
  for (int64_t b = 0, count = numel(c.in(0)); b < count; ++b) {
    const std::vector<double> m = matrix(c.in_data<float>(1) + b * n * n, n);
    const Lu lu = factor(m, n);
    if (lu.singular) {
      cofactors_from_minors(m, n, cof.data());
    } else {
      cofactors_from_lu(lu, n, cof.data());
    }
    for (int64_t k = 0; k < n * n; ++k) dx[b * n * n + k] = static_cast<float>(dy[b] * cof[static_cast<size_t>(k)]);
  }
  return Status::ok();
}

}  // namespace

void register_ref_determinant(KernelTable& t) {
  t.add({"Det", DType::kF32, det});
  t.add({"DetGrad", DType::kF32, det_grad});
}

}  // namespace pock
