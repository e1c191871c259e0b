// Reference kernels of the determinant family, in double: LU factorization with partial pivoting
// gives the determinant (the product of the pivots, negated per row swap). The gradient is the
// cofactor matrix, det * inv(x)^T when the factorization has no zero pivot; for a singular matrix,
// where that formula is 0 * infinity, each cofactor is the determinant of its minor.
#include <algorithm>
#include <cmath>
#include <string_view>
#include <utility>
#include <vector>

#include "kernels/ref/ref_util.hpp"
#include "runtime/prepared_kernel.hpp"

namespace pock {
namespace {

// An LU factorization in place: L below the diagonal of `a` (unit diagonal implied), U on and above
// it; row i of the factors is row perm[i] of the matrix.
struct Lu {
  double* a;
  int64_t* perm;
  double det = 1;
  bool singular = false;
};

Lu factor(double* a, int64_t* perm, int64_t n) {
  Lu lu{a, perm, 1.0, false};
  auto at = [&](int64_t i, int64_t j) -> double& { return a[i * n + j]; };
  for (int64_t i = 0; i < n; ++i) perm[i] = i;
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
      std::swap(perm[k], perm[pivot]);
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

// Buffers for one matrix of order n, sized at prepare: a step allocates nothing.
struct DetState {
  int64_t n = 0;
  std::vector<double> m, a, cof, v, minor;  // the matrix, its factors, cofactors, a solve, a minor
  std::vector<int64_t> perm;
  Status prepare(const pock_op_desc& op) {
    const pock_tensor_desc& x = op.inputs[std::string_view(op.op) == "DetGrad" ? 1 : 0];
    n = x.dims[x.rank - 1];
    const size_t nn = static_cast<size_t>(n * n);
    m.resize(nn);
    a.resize(nn);
    cof.resize(nn);
    v.resize(static_cast<size_t>(n));
    minor.resize(n > 1 ? static_cast<size_t>((n - 1) * (n - 1)) : 0);
    perm.resize(static_cast<size_t>(n));
    return Status::ok();
  }
  // The b-th matrix of x, in m and (to be factored) in a.
  void load(const float* x, int64_t b) {
    std::copy(x + b * n * n, x + (b + 1) * n * n, m.begin());
    std::copy(m.begin(), m.end(), a.begin());
  }
};

Status det(const KernelCall& c, DetState& s) {
  float* y = c.out_data<float>(0);
  for (int64_t b = 0, count = numel(c.out(0)); b < count; ++b) {
    s.load(c.in_data<float>(0), b);
    y[b] = static_cast<float>(factor(s.a.data(), s.perm.data(), s.n).det);
  }
  return Status::ok();
}

// cof[i][j] = det(x) * inv(x)[j][i]: column j of inv(x) solves x v = e_j through the factors.
void cofactors_from_lu(const Lu& lu, int64_t n, double* v, double* cof) {
  auto a = [&](int64_t i, int64_t j) { return lu.a[i * n + j]; };
  for (int64_t j = 0; j < n; ++j) {
    for (int64_t i = 0; i < n; ++i) v[i] = lu.perm[i] == j ? 1.0 : 0.0;
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t k = 0; k < i; ++k) v[i] -= a(i, k) * v[k];
    }
    for (int64_t i = n - 1; i >= 0; --i) {
      for (int64_t k = i + 1; k < n; ++k) v[i] -= a(i, k) * v[k];
      v[i] /= a(i, i);
    }
    for (int64_t i = 0; i < n; ++i) cof[j * n + i] = lu.det * v[i];  // transposed
  }
}

void cofactors_from_minors(DetState& s) {
  const int64_t n = s.n;
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      size_t k = 0;
      for (int64_t r = 0; r < n; ++r) {
        for (int64_t c = 0; c < n; ++c) {
          if (r != i && c != j) s.minor[k++] = s.m[static_cast<size_t>(r * n + c)];
        }
      }
      const double sign = (i + j) % 2 == 0 ? 1.0 : -1.0;
      s.cof[static_cast<size_t>(i * n + j)] = n == 1 ? 1.0 : sign * factor(s.minor.data(), s.perm.data(), n - 1).det;
    }
  }
}

Status det_grad(const KernelCall& c, DetState& s) {
  const int64_t n = s.n;
  const float* dy = c.in_data<float>(0);
  float* dx = c.out_data<float>(0);
  for (int64_t b = 0, count = numel(c.in(0)); b < count; ++b) {
    s.load(c.in_data<float>(1), b);
    const Lu lu = factor(s.a.data(), s.perm.data(), n);
    if (lu.singular) {
      cofactors_from_minors(s);
    } else {
      cofactors_from_lu(lu, n, s.v.data(), s.cof.data());
    }
    for (int64_t k = 0; k < n * n; ++k) dx[b * n * n + k] = static_cast<float>(dy[b] * s.cof[static_cast<size_t>(k)]);
  }
  return Status::ok();
}

}  // namespace

void register_ref_determinant(KernelTable& t) {
  t.add(prepared_kernel<DetState, det>("Det", DType::kF32));
  t.add(prepared_kernel<DetState, det_grad>("DetGrad", DType::kF32));
}

}  // namespace pock
