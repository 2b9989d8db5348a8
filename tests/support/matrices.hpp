#pragma once
// Test matrices of the CG tests: an ill-conditioned SPD matrix, and the true residual of a
// solution.

#include <relax/sparse/csr.hpp>

#include <cmath>
#include <cstdint>
#include <vector>

namespace relax::testing {

// The 5-point Laplacian on m × m unknowns scaled as D P D, D = diag(10^(spread · k / (n − 1))):
// symmetric positive definite with a condition number about 10^(2 spread) times P's.
inline relax::Csr<double> scaled_poisson(std::int64_t m, double spread) {
  const std::int64_t n = m * m;
  relax::Csr<double> a;
  a.rows = a.cols = n;
  a.row_ptr.push_back(0);
  auto d = [&](std::int64_t k) { return std::pow(10.0, spread * double(k) / double(n - 1)); };
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < m; ++j) {
      const std::int64_t k = i * m + j;
      auto put = [&](std::int64_t c, double v) {
        a.col_idx.push_back(static_cast<std::int32_t>(c));
        a.values.push_back(v * (d(k) * d(c)));  // symmetric bit for bit
      };
      if (i > 0) put(k - m, -1.0);
      if (j > 0) put(k - 1, -1.0);
      put(k, 4.0);
      if (j + 1 < m) put(k + 1, -1.0);
      if (i + 1 < m) put(k + m, -1.0);
      a.row_ptr.push_back(static_cast<std::int64_t>(a.col_idx.size()));
    }
  return a;
}

// ‖b − A x‖₂ / ‖b‖₂ computed on the host in double.
inline double true_residual(const relax::Csr<double>& a, const std::vector<double>& b, const std::vector<double>& x) {
  std::vector<double> ax(b.size());
  a.multiply(x.data(), ax.data());
  double r = 0, s = 0;
  for (std::size_t k = 0; k < b.size(); ++k) {
    r += (b[k] - ax[k]) * (b[k] - ax[k]);
    s += b[k] * b[k];
  }
  return std::sqrt(r / s);
}

}  // namespace relax::testing
